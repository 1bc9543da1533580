package dev.weir.ingester.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.tsdb.labels.Matcher;
import org.junit.jupiter.api.Test;

class SelectorParserTest {
  @Test
  void parsesMetricNameAndMatchers() {
    assertThat(SelectorParser.parse("up")).containsExactly(Matcher.eq("__name__", "up"));
    assertThat(SelectorParser.parse("node:cpu:rate5m{job=\"a\"}"))
        .containsExactly(Matcher.eq("__name__", "node:cpu:rate5m"), Matcher.eq("job", "a"));
    assertThat(SelectorParser.parse(" { a = \"1\" , b!='2', c=~`x.*`, d!~\"y\", } "))
        .containsExactly(Matcher.eq("a", "1"), Matcher.neq("b", "2"), Matcher.re("c", "x.*"),
            Matcher.nre("d", "y"));
  }

  @Test
  void decodesEscapesButNotInBackquotes() {
    assertThat(SelectorParser.parse("{a=\"q\\\"\\n\\\\\\u00e9\"}").get(0).value()).isEqualTo("q\"\n\\é");
    assertThat(SelectorParser.parse("{a=`\\d+`}").get(0).value()).isEqualTo("\\d+");
  }

  @Test
  void refusesSelectorsThatMatchEverything() {
    assertThatThrownBy(() -> SelectorParser.parse("{a=\"\"}"))
        .isInstanceOf(ClientErrorException.class).hasMessageContaining("at least one non-empty matcher");
    assertThatThrownBy(() -> SelectorParser.parse("{a=~\".*\"}"))
        .hasMessageContaining("at least one non-empty matcher");
  }

  @Test
  void reportsWhereParsingStopped() {
    assertThatThrownBy(() -> SelectorParser.parse("up{a=\"1\""))
        .isInstanceOf(ClientErrorException.class).hasMessageContaining("unclosed");
    assertThatThrownBy(() -> SelectorParser.parse("up{a>\"1\"}")).hasMessageContaining("char 5");
    assertThatThrownBy(() -> SelectorParser.parse("up{a=1}")).hasMessageContaining("quoted string");
    assertThatThrownBy(() -> SelectorParser.parse("up{a=\"1}")).hasMessageContaining("unterminated");
    assertThatThrownBy(() -> SelectorParser.parse("up{a=~\"(\"}")).hasMessageContaining("invalid regular expression");
    assertThatThrownBy(() -> SelectorParser.parse("")).hasMessageContaining("empty selector");
    assertThatThrownBy(() -> SelectorParser.parse("up down")).hasMessageContaining("unexpected character 'd'");
  }

  @Test
  void timeParamsTakeUnixSecondsAndRfc3339() {
    assertThat(TimeParams.parse("1700000000.123", 0, "start")).isEqualTo(1_700_000_000_123L);
    assertThat(TimeParams.parse("1700000000", 0, "start")).isEqualTo(1_700_000_000_000L);
    assertThat(TimeParams.parse("2023-11-14T22:13:20.5Z", 0, "start")).isEqualTo(1_700_000_000_500L);
    assertThat(TimeParams.parse(null, 42, "start")).isEqualTo(42);
    assertThatThrownBy(() -> TimeParams.parse("yesterday", 0, "end"))
        .isInstanceOf(ClientErrorException.class).hasMessageContaining("invalid parameter \"end\"");
  }

  @Test
  void jsonWriterEscapesAndFormatsValues() {
    JsonWriter w = new JsonWriter(new StringBuilder());
    w.string("a\"b\\c\n\u0001").raw(',').value(1).raw(',').value(0.5).raw(',').value(Double.NaN)
        .raw(',').value(Double.NEGATIVE_INFINITY).raw(',').value(-0.0).raw(',').value(1e300);
    assertThat(w.toString()).isEqualTo("\"a\\\"b\\\\c\\n\\u0001\",1,0.5,\"NaN\",\"-Inf\",-0,1.0E300");
  }
}
