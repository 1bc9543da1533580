package dev.weir.ingester.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The configuration reference in docs/ is generated from the flag definitions; keep it in sync. */
class ConfigurationReferenceTest {
  static final Path REFERENCE = Path.of("..", "docs", "configuration.md");

  @Test
  void docsConfigurationReferenceIsUpToDate() throws Exception {
    FlagSet fs = new FlagSet();
    new WeirConfig.Flags(fs);
    String expected = fs.markdownReference();
    String actual = Files.exists(REFERENCE) ? Files.readString(REFERENCE) : "<missing>";
    assertThat(actual)
        .as("docs/configuration.md is stale; regenerate it with:\n"
            + "  java -jar ingester/target/weir.jar --help-markdown > docs/configuration.md")
        .isEqualTo(expected);
  }
}
