package dev.weir.ingester.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.ingester.ingest.IngestStorageConfig;
import org.junit.jupiter.api.Test;

/** -ingest-storage.kafka.producer-compression: lz4 unless set, one of Kafka's codecs. */
class IngestStorageCompressionFlagTest {
  static IngestStorageConfig parse(String... args) throws ConfigException {
    FlagSet fs = new FlagSet();
    IngestStorageConfig.Flags flags = new IngestStorageConfig.Flags(fs);
    fs.parseArgs(args);
    return flags.build();
  }

  @Test
  void lz4UnlessSetAndEveryKafkaCodecAccepted() throws Exception {
    assertThat(parse().kafka().producerCompression()).isEqualTo("lz4");
    for (String codec : new String[] {"none", "gzip", "snappy", "lz4", "zstd"}) {
      assertThat(parse("--ingest-storage.kafka.producer-compression=" + codec).kafka().producerCompression())
          .isEqualTo(codec);
    }
  }

  @Test
  void anUnknownCodecIsRefusedByName() {
    assertThatThrownBy(() -> parse("--ingest-storage.kafka.producer-compression=brotli"))
        .isInstanceOf(ConfigException.class).hasMessageContaining("producer-compression")
        .hasMessageContaining("brotli");
  }
}
