package dev.weir.ingester.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FlagSetTest {
  @TempDir Path dir;

  @Test
  void acceptsSingleAndDoubleDashWithEqualsOrSeparateValue() throws Exception {
    FlagSet fs = new FlagSet();
    Flag<Integer> port = fs.integer("server.http-listen-port", 8080, "port");
    Flag<Boolean> on = fs.bool("feature.enabled", false, "on");
    Flag<String> name = fs.string("name", "x", "name");
    fs.parseArgs(new String[] {"-server.http-listen-port=1", "--feature.enabled", "--name", "y"});
    assertThat(port.get()).isEqualTo(1);
    assertThat(on.get()).isTrue();
    assertThat(name.get()).isEqualTo("y");
    assertThat(port.source()).isEqualTo("command line");
  }

  @Test
  void rejectsUnknownFlagsAndBadValuesNamingTheKey() {
    FlagSet fs = new FlagSet();
    fs.integer("a.b", 1, "x");
    fs.duration("d", Duration.ZERO, "x");
    assertThatThrownBy(() -> fs.parseArgs(new String[] {"--nope=1"}))
        .isInstanceOf(ConfigException.class).hasMessageContaining("unknown flag: --nope");
    assertThatThrownBy(() -> fs.parseArgs(new String[] {"--a.b=x"}))
        .isInstanceOf(ConfigException.class).hasMessageContaining("a.b");
    assertThatThrownBy(() -> fs.parseArgs(new String[] {"--d=5 parsecs"}))
        .isInstanceOf(ConfigException.class).hasMessageContaining("d (duration)");
    assertThatThrownBy(() -> fs.parseArgs(new String[] {"--a.b"}))
        .isInstanceOf(ConfigException.class).hasMessageContaining("needs a value");
  }

  @Test
  void yamlTakesNestedUnderscoreKeysAndFlatKeysAndTheCommandLineWins() throws Exception {
    FlagSet fs = new FlagSet();
    Flag<Integer> http = fs.integer("server.http-listen-port", 8080, "p");
    Flag<Integer> grpc = fs.integer("server.grpc-listen-port", 9095, "p");
    Flag<List<String>> endpoints = fs.list("kv.etcd.endpoints", List.of(), "e");
    Path file = dir.resolve("weir.yaml");
    Files.writeString(file, """
        server:
          http_listen_port: 18080
          grpc_listen_port: 19095
        kv.etcd.endpoints: [a:2379, b:2379]
        """);
    fs.applyYaml(file);
    fs.parseArgs(new String[] {"-server.grpc-listen-port=29095"});
    assertThat(http.get()).isEqualTo(18080);
    assertThat(http.source()).isEqualTo("config file");
    assertThat(grpc.get()).isEqualTo(29095);
    assertThat(endpoints.get()).containsExactly("a:2379", "b:2379");
  }

  @Test
  void yamlRejectsUnknownKeysAndMalformedFiles() throws Exception {
    FlagSet fs = new FlagSet();
    fs.integer("server.http-listen-port", 8080, "p");
    Path unknown = dir.resolve("u.yaml");
    Files.writeString(unknown, "server:\n  http_listen_prot: 1\n");
    assertThatThrownBy(() -> fs.applyYaml(unknown))
        .isInstanceOf(ConfigException.class).hasMessageContaining("server.http-listen-prot");
    Path broken = dir.resolve("b.yaml");
    Files.writeString(broken, "server: [unclosed\n");
    assertThatThrownBy(() -> fs.applyYaml(broken))
        .isInstanceOf(ConfigException.class).hasMessageContaining("not valid YAML");
    assertThatThrownBy(() -> fs.applyYaml(dir.resolve("missing.yaml")))
        .isInstanceOf(ConfigException.class).hasMessageContaining("cannot read");
  }

  @Test
  void usageListsEveryFlagWithDefaultAndHelp() {
    FlagSet fs = new FlagSet();
    fs.integer("b.port", 1, "The port.");
    fs.string("a.name", "", "The name.");
    String usage = fs.usage("weir");
    assertThat(usage).contains("--a.name string\n        The name. (default \"\")");
    assertThat(usage.indexOf("--a.name")).isLessThan(usage.indexOf("--b.port"));
    assertThat(fs.markdownReference()).contains("| `b.port` | int | `1` | The port. |");
  }

  @Test
  void durationsParseMimirStyle() {
    assertThat(Durations.parse("1h30m")).isEqualTo(Duration.ofMinutes(90));
    assertThat(Durations.parse("500ms")).isEqualTo(Duration.ofMillis(500));
    assertThat(Durations.parse("7d")).isEqualTo(Duration.ofDays(7));
    assertThat(Durations.parse("0")).isEqualTo(Duration.ZERO);
    assertThat(Durations.parse("1.5s")).isEqualTo(Duration.ofMillis(1500));
    assertThatThrownBy(() -> Durations.parse("10")).hasMessageContaining("not a duration");
    assertThatThrownBy(() -> Durations.parse("1x")).hasMessageContaining("not a duration");
    for (String s : List.of("2h", "1h30m", "15s", "250ms", "20m", "1h0m5s")) {
      Duration d = Durations.parse(s);
      assertThat(Durations.parse(Durations.format(d))).isEqualTo(d);
    }
    assertThat(Durations.format(Duration.ofHours(2))).isEqualTo("2h");
  }

  @Test
  void weirConfigLoadsFromFileAndArgsAndValidates() throws Exception {
    Path file = dir.resolve("weir.yaml");
    Files.writeString(file, "auth:\n  multitenancy_enabled: false\ningester:\n  id: ingester-zone-a-3\n");
    WeirConfig c = new WeirConfig.Flags(new FlagSet())
        .load(new String[] {"--config.file=" + file, "--server.http-listen-port", "0"});
    assertThat(c.tenants().multitenancyEnabled()).isFalse();
    assertThat(c.ingester().id()).isEqualTo("ingester-zone-a-3");
    assertThat(c.server().httpListenPort()).isZero();
    assertThatThrownBy(() -> new WeirConfig.Flags(new FlagSet())
            .load(new String[] {"--server.http-listen-port=70000"}))
        .isInstanceOf(ConfigException.class).hasMessageContaining("server.http-listen-port");
    assertThatThrownBy(() -> new WeirConfig.Flags(new FlagSet()).load(new String[] {"stray"}))
        .isInstanceOf(ConfigException.class).hasMessageContaining("unexpected argument: stray");
  }
}
