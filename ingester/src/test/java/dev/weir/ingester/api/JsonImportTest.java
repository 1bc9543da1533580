package dev.weir.ingester.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.proto.prompb.TimeSeries;
import dev.weir.storage.errors.ClientErrorException;
import org.junit.jupiter.api.Test;

class JsonImportTest {
  @Test
  void parsesTheExportFormat() {
    TimeSeries ts = JsonImport.parseLine(
        "{\"metric\":{\"__name__\":\"t\",\"room\":\"k\"},\"values\":[1,2.5,\"NaN\",\"-Inf\"],"
            + "\"timestamps\":[10,20,30,40]}", 1);
    assertThat(ts.getLabelsList()).extracting(l -> l.getName() + "=" + l.getValue())
        .containsExactly("__name__=t", "room=k");
    assertThat(ts.getSamplesList()).extracting(s -> s.getTimestamp()).containsExactly(10L, 20L, 30L, 40L);
    assertThat(ts.getSamples(1).getValue()).isEqualTo(2.5);
    assertThat(ts.getSamples(2).getValue()).isNaN();
    assertThat(ts.getSamples(3).getValue()).isEqualTo(Double.NEGATIVE_INFINITY);
  }

  @Test
  void malformedLinesAreClientErrorsNamingTheLine() {
    assertThatThrownBy(() -> JsonImport.parseLine("{\"metric\":", 7))
        .isInstanceOf(ClientErrorException.class).hasMessageStartingWith("line 7: malformed JSON");
    assertThatThrownBy(() -> JsonImport.parseLine("{\"values\":[1],\"timestamps\":[]}", 2))
        .hasMessageContaining("differ in length");
    assertThatThrownBy(() -> JsonImport.parseLine("{\"values\":[true],\"timestamps\":[1]}", 3))
        .hasMessageContaining("values must be numbers");
    assertThatThrownBy(() -> JsonImport.parseLine("[1]", 4)).hasMessageContaining("expected a JSON object");
  }
}
