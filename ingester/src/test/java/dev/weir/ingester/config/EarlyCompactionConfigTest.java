package dev.weir.ingester.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.storage.tsdb.EarlyCompaction;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The blocks-storage.tsdb.early-head-compaction-* flags. */
class EarlyCompactionConfigTest {
  static EarlyCompaction.Config parse(String... args) throws ConfigException {
    FlagSet fs = new FlagSet();
    StorageConfig.Flags flags = new StorageConfig.Flags(fs);
    fs.parseArgs(args);
    return flags.buildEarlyCompaction();
  }

  @Test
  void byDefaultTheMemoryBudgetIs70PercentOfTheMaximumHeapAndTheSeriesTriggerIsOff() throws Exception {
    EarlyCompaction.Config c = parse();
    assertThat(c.minInMemorySeries()).isZero();
    assertThat(c.memoryBudgetBytes()).isEqualTo(Runtime.getRuntime().maxMemory() / 100 * 70);
    assertThat(c.minReductionPercent()).isEqualTo(15);
    assertThat(c.checkInterval()).isEqualTo(Duration.ofSeconds(5));
    assertThat(c.enabled()).isTrue();
  }

  @Test
  void bothTriggersOffDisablesIt() throws Exception {
    EarlyCompaction.Config c = parse("--blocks-storage.tsdb.early-head-compaction-memory-budget-percentage=0");
    assertThat(c.enabled()).isFalse();
    c = parse("--blocks-storage.tsdb.early-head-compaction-memory-budget-percentage=0",
        "--blocks-storage.tsdb.early-head-compaction-min-in-memory-series=1000000");
    assertThat(c.enabled()).isTrue();
    assertThat(c.minInMemorySeries()).isEqualTo(1_000_000);
  }

  @Test
  void outOfRangeValuesNameTheFlag() {
    assertThatThrownBy(() -> parse("--blocks-storage.tsdb.early-head-compaction-memory-budget-percentage=101"))
        .isInstanceOf(ConfigException.class).hasMessageContaining("early-head-compaction-memory-budget-percentage");
    assertThatThrownBy(() -> parse(
        "--blocks-storage.tsdb.early-head-compaction-min-estimated-series-reduction-percentage=0"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("early-head-compaction-min-estimated-series-reduction-percentage");
    assertThatThrownBy(() -> parse("--blocks-storage.tsdb.early-head-compaction-min-in-memory-series=-5"))
        .isInstanceOf(ConfigException.class).hasMessageContaining("early-head-compaction-min-in-memory-series");
    assertThatThrownBy(() -> parse("--blocks-storage.tsdb.early-head-compaction-check-interval=0s"))
        .isInstanceOf(ConfigException.class).hasMessageContaining("early-head-compaction-check-interval");
  }
}
