package dev.weir.ingester.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.ingester.config.ConfigException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OverridesTest {
  @TempDir Path dir;

  @Test
  void tenantsOverrideTheDefaultsKeyByKey() throws Exception {
    Path f = dir.resolve("o.yaml");
    Files.writeString(f, """
        overrides:
          a:
            ingestion_rate: 5000
            ingestion_burst_size: 10000
            max_global_series_per_user: 7
          b:
            creation_grace_period: 1m
            max_label_names_per_series: 5
        """);
    Overrides o = Overrides.load(f, Limits.DEFAULT);
    assertThat(o.apply("a").ingestionRate()).isEqualTo(5000);
    assertThat(o.apply("a").ingestionBurstSize()).isEqualTo(10000);
    assertThat(o.apply("a").maxGlobalSeriesPerUser()).isEqualTo(7);
    assertThat(o.apply("a").maxLabelNameLength()).isEqualTo(Limits.DEFAULT.maxLabelNameLength());
    assertThat(o.apply("b").creationGracePeriod()).isEqualTo(Duration.ofMinutes(1));
    assertThat(o.apply("b").maxLabelNamesPerSeries()).isEqualTo(5);
    assertThat(o.apply("c")).isEqualTo(Limits.DEFAULT);
  }

  @Test
  void theOutOfOrderWindowIsAPerTenantLimit() throws Exception {
    Path f = dir.resolve("ooo.yaml");
    Files.writeString(f, """
        overrides:
          late:
            out_of_order_time_window: 30m
        """);
    Overrides o = Overrides.load(f, Limits.DEFAULT);
    assertThat(o.apply("late").outOfOrderTimeWindow()).isEqualTo(Duration.ofMinutes(30));
    assertThat(o.apply("other").outOfOrderTimeWindow()).as("off by default, as in Mimir").isZero();
  }

  @Test
  void theBucketRetentionIsKeptWhicheverKeyComesAfterIt() throws Exception {
    Path f = dir.resolve("retention.yaml");
    Files.writeString(f, """
        overrides:
          a:
            compactor_blocks_retention_period: 30d
            ingestion_rate: 5000
            creation_grace_period: 1m
          forever:
            compactor_blocks_retention_period: 0s
        """);
    Limits defaults = new Limits(30, 1024, 2048, Duration.ofMinutes(10), 150_000, 0, 200_000, Duration.ofDays(7));
    Overrides o = Overrides.load(f, defaults);
    assertThat(o.apply("a").compactorBlocksRetentionPeriod()).isEqualTo(Duration.ofDays(30));
    assertThat(o.apply("a").ingestionRate()).isEqualTo(5000);
    assertThat(o.apply("forever").compactorBlocksRetentionPeriod()).isZero();
    assertThat(o.apply("other").compactorBlocksRetentionPeriod()).isEqualTo(Duration.ofDays(7));
    assertThat(Limits.DEFAULT.compactorBlocksRetentionPeriod()).as("keep forever by default").isZero();
  }

  @Test
  void theShuffleShardSizeIsAPerTenantLimit() throws Exception {
    Path f = dir.resolve("shard.yaml");
    Files.writeString(f, """
        overrides:
          noisy:
            ingestion_partitions_tenant_shard_size: 2
            ingestion_rate: 100
          everywhere:
            ingestion_partitions_tenant_shard_size: 0
        """);
    Limits defaults = new Limits(30, 1024, 2048, Duration.ofMinutes(10), 150_000, 0, 200_000, Duration.ZERO, 4);
    Overrides o = Overrides.load(f, defaults);
    assertThat(o.apply("noisy").ingestionPartitionsTenantShardSize()).isEqualTo(2);
    assertThat(o.apply("noisy").ingestionRate()).isEqualTo(100);
    assertThat(o.apply("everywhere").ingestionPartitionsTenantShardSize()).isZero();
    assertThat(o.apply("other").ingestionPartitionsTenantShardSize()).isEqualTo(4);
    assertThat(Limits.DEFAULT.ingestionPartitionsTenantShardSize()).as("all partitions by default").isZero();
    Files.writeString(f, "overrides:\n  a:\n    ingestion_partitions_tenant_shard_size: -1\n");
    assertThatThrownBy(() -> Overrides.load(f, defaults)).hasMessageContaining("overrides of 'a'")
        .hasMessageContaining("ingestion-partition-tenant-shard-size must not be negative");
  }

  @Test
  void mistakesAreNamed() throws Exception {
    Path f = dir.resolve("bad.yaml");
    Files.writeString(f, "overrides:\n  a:\n    ingestion_rat: 5\n");
    assertThatThrownBy(() -> Overrides.load(f, Limits.DEFAULT)).isInstanceOf(ConfigException.class)
        .hasMessageContaining("unknown limit 'ingestion_rat' for tenant 'a'");
    Files.writeString(f, "overrides:\n  a:\n    max_global_series_per_user: many\n");
    assertThatThrownBy(() -> Overrides.load(f, Limits.DEFAULT)).hasMessageContaining("is not a number: many");
    Files.writeString(f, "limits: {}\n");
    assertThatThrownBy(() -> Overrides.load(f, Limits.DEFAULT)).hasMessageContaining("unknown top-level key 'limits'");
    Files.writeString(f, "overrides: [1, 2\n");
    assertThatThrownBy(() -> Overrides.load(f, Limits.DEFAULT)).hasMessageContaining("not valid YAML");
    Files.writeString(f, "overrides:\n  a:\n    ingestion_rate: -1\n");
    assertThatThrownBy(() -> Overrides.load(f, Limits.DEFAULT)).isInstanceOf(ConfigException.class);
  }

  @Test
  void aBadReloadKeepsTheLastGoodLimits() throws Exception {
    Path f = dir.resolve("r.yaml");
    Files.writeString(f, "overrides:\n  a:\n    ingestion_rate: 1\n");
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    RuntimeConfig rc = new RuntimeConfig(f, Duration.ofHours(1), Limits.DEFAULT, registry);
    rc.reload(f, true);
    assertThat(rc.apply("a").ingestionRate()).isEqualTo(1);
    Files.writeString(f, "overrides:\n  a:\n    ingestion_rate: x\n");
    rc.reload(f, false);
    assertThat(rc.apply("a").ingestionRate()).isEqualTo(1);
    assertThat(registry.get("weir.runtime.config.last.reload.successful").gauge().value()).isZero();
    Files.writeString(f, "overrides:\n  a:\n    ingestion_rate: 2\n");
    rc.reload(f, false);
    assertThat(rc.apply("a").ingestionRate()).isEqualTo(2);
    assertThat(registry.get("weir.runtime.config.last.reload.successful").gauge().value()).isEqualTo(1);
    Files.writeString(f, "overrides:\n  a:\n    ingestion_rate: x\n");
    assertThatThrownBy(() -> new RuntimeConfig(f, Duration.ofHours(1), Limits.DEFAULT, new SimpleMeterRegistry())
        .reload(f, true)).isInstanceOf(ConfigException.class);
  }
}
