package dev.weir.storage.tenant;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class TenantIdsTest {
  @ParameterizedTest
  @ValueSource(strings = {"..", ".", "../wal/victim", "/tmp/x", "a/b", "a\\b", "a\0b", "a b", "tenant:1", "é", ""})
  void refusesIdsThatAreNotPlainNames(String id) {
    assertThat(TenantIds.problem(id)).isNotNull();
    assertThat(TenantIds.problem(id.getBytes(StandardCharsets.UTF_8))).isNotNull();
    assertThat(TenantIds.fromBytes(id.getBytes(StandardCharsets.UTF_8))).isNull();
  }

  @ParameterizedTest
  @ValueSource(strings = {"team-a", "A_b.c", "x", "...", "a..b", "(prod)!*'"})
  void acceptsMimirsCharacterSet(String id) {
    assertThat(TenantIds.problem(id)).isNull();
    assertThat(TenantIds.fromBytes(id.getBytes(StandardCharsets.UTF_8))).isEqualTo(id);
  }

  @Test
  void limitsTheLengthTo150() {
    assertThat(TenantIds.problem("a".repeat(150))).isNull();
    assertThat(TenantIds.problem("a".repeat(151))).contains("longer than 150");
    assertThat(TenantIds.problem("a".repeat(151).getBytes(StandardCharsets.US_ASCII))).contains("longer than 150");
  }

  @Test
  void namesTheOffendingCharacter() {
    assertThat(TenantIds.problem("a\0b")).contains("U+0000");
    assertThat(TenantIds.problem("a/b")).contains("'/'");
    assertThat(TenantIds.problem(new byte[] {'a', (byte) 0xc3, (byte) 0xa9})).contains("0xc3");
  }
}
