package dev.weir.storage.testing;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * A real S3-compatible server: S3Proxy over a local directory ({@code filesystem-nio2}), in its own
 * JVM, started from the jars that the {@code storage/s3-server} module resolves, on a free loopback
 * port, with AWS v2/v4 signatures checked against {@link #ACCESS_KEY}/{@link #SECRET_KEY}. One per
 * test class; {@link #close()} kills it.
 *
 * <p>Not thread-safe.
 */
public final class S3Server implements AutoCloseable {
  public static final String ACCESS_KEY = "weir-test";
  public static final String SECRET_KEY = "weir-test-secret/+=";

  private final Path dir;
  private final int port;
  private Process process;

  private S3Server(Path dir, int port) {
    this.dir = dir;
    this.port = port;
  }

  /** Starts a server storing its buckets under {@code dir} and waits until it answers. */
  public static S3Server start(Path dir) throws Exception {
    int port = dev.weir.ring.testing.LoopbackPorts.free();
    S3Server server = new S3Server(dir, port);
    Files.createDirectories(dir.resolve("data"));
    Files.writeString(dir.resolve("s3proxy.properties"), String.join("\n",
        "s3proxy.endpoint=http://127.0.0.1:" + port,
        "s3proxy.authorization=aws-v2-or-v4",
        "s3proxy.identity=" + ACCESS_KEY,
        "s3proxy.credential=" + SECRET_KEY,
        "jclouds.provider=filesystem-nio2",
        "jclouds.filesystem.basedir=" + dir.resolve("data"),
        "jclouds.identity=" + ACCESS_KEY,
        "jclouds.credential=" + SECRET_KEY,
        ""));
    server.launch();
    return server;
  }

  /** The jars of S3Proxy, resolved by the storage/s3-server module. */
  public static Path lib() {
    return ModuleLib.of("storage/s3-server");
  }

  private void launch() throws Exception {
    List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
        "-XX:+UseSerialGC", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", lib() + "/*", "org.gaul.s3proxy.Main", "--properties",
        dir.resolve("s3proxy.properties").toString());
    process = ChildServer.start("S3Proxy", cmd, dir.resolve("s3proxy.log"), Duration.ofSeconds(60), () -> {
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress("127.0.0.1", port), 500);
      }
    });
  }

  /** {@code 127.0.0.1:port}, the form of {@code blocks-storage.s3.endpoint}. */
  public String endpoint() {
    return "127.0.0.1:" + port;
  }

  public int port() {
    return port;
  }

  /**
   * A plain SDK client with the server's credentials, for test setup (creating buckets). Checksums
   * only when required, as in S3Bucket: S3Proxy refuses the SDK's default aws-chunked uploads.
   */
  public S3Client client() {
    return S3Client.builder().httpClient(UrlConnectionHttpClient.create())
        .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
        .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
        .endpointOverride(URI.create("http://" + endpoint())).forcePathStyle(true).region(Region.US_EAST_1)
        .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(ACCESS_KEY, SECRET_KEY)))
        .build();
  }

  public void createBucket(String name) {
    try (S3Client c = client()) {
      c.createBucket(b -> b.bucket(name));
    }
  }

  @Override
  public void close() {
    if (process != null && process.isAlive()) {
      process.destroyForcibly();
      try {
        process.waitFor(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
