package dev.weir.storage.tsdb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.storage.errors.ClientErrorException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class TenantPathsTest {
  @TempDir Path dir;

  @ParameterizedTest
  @ValueSource(strings = {"..", "../wal/victim", "/tmp/x", "a/b", "nul\0byte", ".", "", "a\\b", "x/..", "../.."})
  void refusesATenantThatIsNotADirectChildOfTheRoot(String tenant) {
    assertThatThrownBy(() -> TenantPaths.child(dir.resolve("wal"), tenant))
        .isInstanceOfSatisfying(ClientErrorException.class, e -> {
          assertThat(e.reason()).isEqualTo("invalid_tenant");
          assertThat(e.httpStatus()).isEqualTo(400);
        });
  }

  @ParameterizedTest
  @ValueSource(strings = {"team-a", "a.b", "..a", "a..", "tenant_1", "ünïcode"})
  void resolvesAValidTenantToADirectChild(String tenant) {
    Path root = dir.resolve("wal");
    Path child = TenantPaths.child(root, tenant);
    assertThat(child).isEqualTo(root.resolve(tenant));
    assertThat(child.getParent()).isEqualTo(root);
  }

  @Test
  void tsdbRefusesAnEscapingTenantBeforeCreatingAnything() throws Exception {
    Tsdb t = new Tsdb(TsdbConfig.defaults(dir.resolve("data")), TsdbMetrics.noop(), () -> 0, x -> () -> 0);
    t.open();
    try {
      for (String bad : new String[] {"..", "../wal/victim", "../../escaped", dir.resolve("abs").toString()}) {
        assertThatThrownBy(() -> t.tenant(bad)).isInstanceOf(ClientErrorException.class)
            .hasMessageContaining("cannot name a storage directory");
      }
      assertThat(t.tenants()).isEmpty();
      assertThat(dir.resolve("escaped")).doesNotExist();
      assertThat(dir.resolve("abs")).doesNotExist();
      assertThat(dir.resolve("data/wal/victim")).doesNotExist();
      assertThat(dir.resolve("data/tsdb/victim")).doesNotExist();
      t.tenant("fine");
      assertThat(Files.isDirectory(dir.resolve("data/tsdb/fine/wal"))).isTrue();
    } finally {
      t.close();
    }
  }
}
