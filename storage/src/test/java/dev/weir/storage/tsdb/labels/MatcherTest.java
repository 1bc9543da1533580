package dev.weir.storage.tsdb.labels;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class MatcherTest {
  private final Labels series = Labels.of("__name__", "up", "job", "api", "instance", "a:1");

  @Test
  void equalityMatchers() {
    assertThat(Matcher.eq("job", "api").matches(series)).isTrue();
    assertThat(Matcher.eq("job", "ap").matches(series)).isFalse();
    assertThat(Matcher.neq("job", "api").matches(series)).isFalse();
    assertThat(Matcher.neq("job", "web").matches(series)).isTrue();
  }

  @Test
  void absentLabelBehavesAsEmptyValue() {
    assertThat(Matcher.eq("env", "").matches(series)).isTrue();
    assertThat(Matcher.neq("env", "").matches(series)).isFalse();
    assertThat(Matcher.neq("env", "prod").matches(series)).isTrue();
    assertThat(Matcher.re("env", ".*").matches(series)).isTrue();
    assertThat(Matcher.re("env", ".+").matches(series)).isFalse();
    assertThat(Matcher.nre("env", "prod").matches(series)).isTrue();
    assertThat(Matcher.nre("env", ".*").matches(series)).isFalse();
  }

  @Test
  void regexIsFullyAnchored() {
    assertThat(Matcher.re("job", "ap").matches(series)).isFalse();
    assertThat(Matcher.re("job", "a.*").matches(series)).isTrue();
    assertThat(Matcher.re("job", "api|web").matches(series)).isTrue();
    assertThat(Matcher.re("job", "x|api").matches(series)).isTrue();
    assertThat(Matcher.nre("job", "a").matches(series)).isTrue();
    assertThat(Matcher.nre("job", "a.i").matches(series)).isFalse();
  }

  @Test
  void dotMatchesNewlineAsInPrometheus() {
    assertThat(Matcher.re("x", "a.b").matches("a\nb")).isTrue();
  }

  @Test
  void matchesEmptyIsPrecomputed() {
    assertThat(Matcher.eq("a", "").matchesEmpty()).isTrue();
    assertThat(Matcher.eq("a", "x").matchesEmpty()).isFalse();
    assertThat(Matcher.neq("a", "x").matchesEmpty()).isTrue();
    assertThat(Matcher.re("a", "x?").matchesEmpty()).isTrue();
    assertThat(Matcher.nre("a", "x?").matchesEmpty()).isFalse();
  }

  @Test
  void invalidRegexNamesTheLabel() {
    assertThatThrownBy(() -> Matcher.re("job", "a(b"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("job")
        .hasMessageContaining("a(b");
  }

  @Test
  void labelsSortAndPrintLikePrometheus() {
    assertThat(series.name(0)).isEqualTo("__name__");
    assertThat(series.names()).containsExactly("__name__", "instance", "job");
    assertThat(series.toString()).isEqualTo("up{instance=\"a:1\", job=\"api\"}");
    assertThat(Labels.of("b", "x\"y").toString()).isEqualTo("{b=\"x\\\"y\"}");
    assertThatThrownBy(() -> Labels.of("a", "1", "a", "2")).hasMessageContaining("duplicate");
  }

  @Test
  void labelsOrderIsLabelByLabel() {
    Labels a = Labels.of("a", "1");
    Labels ab = Labels.of("a", "1", "b", "1");
    Labels a2 = Labels.of("a", "2");
    assertThat(a).isLessThan(ab);
    assertThat(ab).isLessThan(a2);
    assertThat(Labels.of("b", "1", "a", "1")).isEqualTo(ab).hasSameHashCodeAs(ab);
  }
}
