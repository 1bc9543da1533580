package dev.weir.ingester.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.storage.bucket.S3BucketConfig;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The blocks-storage.* flags: filesystem by default; S3 needs an endpoint, a bucket and both keys or none. */
class BucketConfigTest {
  static BucketConfig parse(String... args) throws ConfigException {
    FlagSet fs = new FlagSet();
    BucketConfig.Flags flags = new BucketConfig.Flags(fs);
    fs.parseArgs(args);
    return flags.build();
  }

  @Test
  void theDefaultIsTheFilesystemBucket() throws Exception {
    BucketConfig c = parse();
    assertThat(c.backend()).isEqualTo("filesystem");
    assertThat(c.filesystemDir()).isEqualTo(Path.of("blocks"));
    assertThat(c.s3()).isNull();
  }

  @Test
  void s3WithoutEndpointOrBucketNamesTheMissingKey() {
    assertThatThrownBy(() -> parse("--blocks-storage.backend=s3", "--blocks-storage.s3.bucket-name=b"))
        .isInstanceOf(ConfigException.class).hasMessageContaining("blocks-storage.s3.endpoint must be set");
    assertThatThrownBy(() -> parse("--blocks-storage.backend=s3", "--blocks-storage.s3.endpoint=minio:9000"))
        .isInstanceOf(ConfigException.class).hasMessageContaining("blocks-storage.s3.bucket-name must be set");
  }

  @Test
  void oneKeyWithoutTheOtherNamesTheMissingOne() {
    String[] base = {"--blocks-storage.backend=s3", "--blocks-storage.s3.endpoint=minio:9000",
        "--blocks-storage.s3.bucket-name=b"};
    assertThatThrownBy(() -> parse(concat(base, "--blocks-storage.s3.access-key-id=k")))
        .isInstanceOf(ConfigException.class).hasMessageStartingWith("blocks-storage.s3.secret-access-key must be set");
    assertThatThrownBy(() -> parse(concat(base, "--blocks-storage.s3.secret-access-key=s")))
        .isInstanceOf(ConfigException.class).hasMessageStartingWith("blocks-storage.s3.access-key-id must be set");
  }

  @Test
  void anEndpointWithASchemeIsRefused() {
    assertThatThrownBy(() -> parse("--blocks-storage.backend=s3", "--blocks-storage.s3.endpoint=http://minio:9000",
        "--blocks-storage.s3.bucket-name=b")).isInstanceOf(ConfigException.class)
        .hasMessageContaining("blocks-storage.s3.endpoint must be host[:port]")
        .hasMessageContaining("blocks-storage.s3.insecure");
  }

  @Test
  void s3FlagsMapToTheBucketConfigWithMimirsAddressing() throws Exception {
    S3BucketConfig minio = parse("--blocks-storage.backend=s3", "--blocks-storage.s3.endpoint=minio:9000",
        "--blocks-storage.s3.bucket-name=blocks", "--blocks-storage.s3.access-key-id=k",
        "--blocks-storage.s3.secret-access-key=s", "--blocks-storage.s3.insecure", "--blocks-storage.s3.max-retries=4")
        .s3();
    assertThat(minio.endpointUrl()).isEqualTo("http://minio:9000");
    assertThat(minio.pathStyle()).isTrue();
    assertThat(minio.regionOrDefault()).isEqualTo("us-east-1");
    assertThat(minio.maxRetries()).isEqualTo(4);
    assertThat(minio.toString()).doesNotContain("=s,").doesNotContain("secret");

    S3BucketConfig aws = parse("--blocks-storage.backend=s3", "--blocks-storage.s3.endpoint=s3.eu-west-1.amazonaws.com",
        "--blocks-storage.s3.bucket-name=blocks", "--blocks-storage.s3.region=eu-west-1").s3();
    assertThat(aws.endpointUrl()).isEqualTo("https://s3.eu-west-1.amazonaws.com");
    assertThat(aws.pathStyle()).isFalse();
    assertThat(aws.accessKeyId()).isEmpty(); // the SDK's default chain
    assertThat(aws.regionOrDefault()).isEqualTo("eu-west-1");

    assertThat(parse("--blocks-storage.backend=s3", "--blocks-storage.s3.endpoint=s3.amazonaws.com",
        "--blocks-storage.s3.bucket-name=with.dots").s3().pathStyle()).as("dots break TLS on virtual hosts").isTrue();
    assertThat(parse("--blocks-storage.backend=s3", "--blocks-storage.s3.endpoint=minio:9000",
        "--blocks-storage.s3.bucket-name=b", "--blocks-storage.s3.bucket-lookup-type=virtual-hosted").s3().pathStyle())
        .isFalse();
  }

  static String[] concat(String[] a, String b) {
    String[] out = java.util.Arrays.copyOf(a, a.length + 1);
    out[a.length] = b;
    return out;
  }
}
