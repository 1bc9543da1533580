package dev.weir.ingester.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.storage.errors.ClientErrorException;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ReadLevelTest {
  @Test
  void absentHeadersReadEventually() {
    assertThat(ReadLevel.parse(null, null)).isEqualTo(ReadLevel.EVENTUAL);
    assertThat(ReadLevel.parse("eventual", " ")).isEqualTo(ReadLevel.EVENTUAL);
    assertThat(ReadLevel.EVENTUAL.waits()).isFalse();
  }

  @Test
  void strongIsCaseInsensitive() {
    assertThat(ReadLevel.parse("Strong", null)).isEqualTo(ReadLevel.STRONG);
  }

  @Test
  void parsesOffsetsAndFormatsThemBack() {
    ReadLevel l = ReadLevel.parse(null, "5:77, 3:1042");
    assertThat(l.strong()).isFalse();
    assertThat(l.offsets()).containsExactlyInAnyOrderEntriesOf(Map.of(3, 1042L, 5, 77L));
    assertThat(l.waits()).isTrue();
    assertThat(l.offsetsHeader()).isEqualTo("3:1042,5:77");
    assertThat(ReadLevel.formatOffsets(Map.of(12, 0L))).isEqualTo("12:0");
  }

  @Test
  void refusesAnUnknownConsistencyNamingTheHeader() {
    assertThatThrownBy(() -> ReadLevel.parse("linearizable", null)).isInstanceOf(ClientErrorException.class)
        .hasMessageContaining("X-Read-Consistency").hasMessageContaining("linearizable")
        .satisfies(e -> assertThat(((ClientErrorException) e).httpStatus()).isEqualTo(400));
  }

  @Test
  void refusesMalformedOffsetsWithTheReason() {
    assertBad("3", "is not partition:offset");
    assertBad("3:", "is not partition:offset");
    assertBad(":5", "is not partition:offset");
    assertBad("a:5", "whole numbers");
    assertBad("3:99999999999999999999", "whole numbers");
    assertBad("3:-1", "must not be negative");
    assertBad("3:1,3:2", "partition 3 is named twice");
    assertBad("3:1,", "is not partition:offset");
  }

  private static void assertBad(String value, String reason) {
    assertThatThrownBy(() -> ReadLevel.parse(null, value)).as(value).isInstanceOf(ClientErrorException.class)
        .hasMessageContaining("X-Read-Consistency-Offsets").hasMessageContaining(reason);
  }
}
