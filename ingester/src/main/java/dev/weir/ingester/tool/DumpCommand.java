package dev.weir.ingester.tool;

import dev.weir.ingester.config.Flag;
import java.io.PrintStream;
import java.util.List;

/**
 * {@code weir tool dump}: the records of a range of one partition, decoded, one JSON line each
 * ({@link RecordJson}); an undecodable record is a line with an {@code error}, and the dump goes
 * on. The exit code is 0 even then: the lines say what is wrong.
 */
final class DumpCommand extends ToolCommand {
  private final KafkaToolFlags kafka = new KafkaToolFlags(flags);
  private final Flag<String> topic = flags.string("topic", "", "Topic (required).");
  private final RangeFlags range = new RangeFlags(flags);

  @Override
  String name() {
    return "dump";
  }

  @Override
  String summary() {
    return "Decode the records of a range to JSON lines (offset, timestamp, tenant, series, samples).";
  }

  @Override
  int run(List<String> args, PrintStream out, PrintStream err) throws Exception {
    RangeFlags.Range r = KafkaRanges.resolve(kafka, topic, range, args);
    try (RecordReader reader = new RecordReader(kafka)) {
      reader.read(r, rec -> out.println(RecordJson.line(rec)));
    }
    return 0;
  }
}
