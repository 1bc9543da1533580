package dev.weir.ingester.tool;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Dispatch, help and usage errors: everything decided before any connection or file is opened. */
class ToolMainTest {
  @Test
  void helpListsEverySubcommandAndExitsZero() {
    ToolRun r = ToolRun.of("--help");
    assertThat(r.code()).isZero();
    assertThat(r.out()).contains("offsets", "dump", "find-duplicates", "replay", "wal inspect", "blocks ls",
        "blocks verify");
  }

  @Test
  void noSubcommandIsAUsageError() {
    ToolRun r = ToolRun.of();
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err()).startsWith("Usage: weir tool <subcommand>");
    assertThat(r.out()).isEmpty();
  }

  @Test
  void subcommandHelpShowsItsFlagsAndExitsZero() {
    ToolRun r = ToolRun.of("dump", "--help");
    assertThat(r.code()).isZero();
    assertThat(r.out()).startsWith("Usage: weir tool dump [flags]")
        .contains("--kafka.address", "--partition", "--from-offset", "--to-time", "--kafka.sasl-mechanism");
    assertThat(ToolRun.of("wal", "inspect", "-h").out()).startsWith("Usage: weir tool wal inspect [flags] <");
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "frobnicate|unknown subcommand \"frobnicate\"",
      "wal|unknown subcommand \"wal\"",
      "offsets --nope=1|unknown flag: --nope=1",
      "offsets --topic t|--kafka.address is required",
      "offsets --kafka.address 127.0.0.1:1|--topic is required",
      "dump --kafka.address 127.0.0.1:1 --topic t|--partition is required",
      "dump --kafka.address 127.0.0.1:1 --topic t --partition x|invalid value \"x\" for partition",
      "dump --kafka.address 127.0.0.1:1 --topic t --partition 0 --from-offset 1 --to-time 5|not both",
      "dump --kafka.address 127.0.0.1:1 --topic t --partition 0 --from-offset 5 --to-offset 4|is after --to-offset",
      "dump --kafka.address 127.0.0.1:1 --topic t --partition 0 --from-time yesterday|neither RFC 3339",
      "dump --kafka.address 127.0.0.1:1 --topic t --partition 0 --from-time 2024-01-02T00:00:00Z"
          + " --to-time 2024-01-01T00:00:00Z|--from-time is after --to-time",
      "replay --kafka.address 127.0.0.1:1 --from-topic a --partition 3 --to-topic a|refusing to write into the"
          + " partition it reads (a partition 3)",
      "replay --kafka.address 127.0.0.1:1 --from-topic a --partition 3 --to-topic a --to-partition 3|refusing",
      "replay --kafka.address 127.0.0.1:1 --from-topic a --partition 3|--to-topic is required",
      "wal inspect|expects one directory",
      "blocks ls extra|unexpected argument extra",
  })
  void usageErrorsExitTwoWithOneLineNamingTheProblem(String args, String message) {
    ToolRun r = ToolRun.of(args.split(" "));
    assertThat(r.code()).as(r.toString()).isEqualTo(2);
    assertThat(r.err()).contains(message);
    assertThat(r.err().strip().lines()).hasSize(1);
    assertThat(r.out()).isEmpty();
  }

  @Test
  void repeatedListFlagsAreJoined() {
    assertThat(ToolMain.mergeRepeated(new String[] {"--group", "a", "-group=b", "--topic", "t", "--group=c"},
        java.util.List.of("group"))).containsExactly("--group=a,b,c", "--topic", "t");
  }
}
