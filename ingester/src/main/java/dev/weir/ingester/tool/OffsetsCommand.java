package dev.weir.ingester.tool;

import dev.weir.ingester.api.JsonWriter;
import dev.weir.ingester.config.Flag;
import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.jspecify.annotations.Nullable;

/**
 * {@code weir tool offsets}: the start and end offset of every partition of a topic, and with
 * {@code --group}, each group's committed offset and lag per partition — in records
 * ({@code end − committed}, Kafka's convention) and in time: the timestamp of the newest record
 * minus that of the last record the group committed (the one before its committed offset), or of
 * the oldest record still in the log when that one is gone. A partition the group never committed
 * to shows null.
 */
final class OffsetsCommand extends ToolCommand {
  private final KafkaToolFlags kafka = new KafkaToolFlags(flags);
  private final Flag<String> topic = flags.string("topic", "", "Topic (required).");
  private final Flag<List<String>> groups = flags.list("group", List.of(), "Consumer group whose committed offsets"
      + " and lag to show; may be repeated.");

  @Override
  String name() {
    return "offsets";
  }

  @Override
  String summary() {
    return "Start and end offset per partition; with --group, committed offset and lag (records and time).";
  }

  @Override
  List<String> repeatable() {
    return List.of("group");
  }

  @Override
  int run(List<String> args, PrintStream out, PrintStream err) throws Exception {
    kafka.validate();
    if (topic.get().isEmpty()) {
      throw ToolException.usage("--topic is required");
    }
    if (!args.isEmpty()) {
      throw ToolException.usage("unexpected argument " + args.get(0));
    }
    try (TopicLog log = new TopicLog(kafka); RecordReader reader = new RecordReader(kafka)) {
      String t = topic.get();
      List<Integer> partitions = IntStream.range(0, log.partitions(t)).boxed().toList();
      Map<Integer, TopicLog.Bounds> bounds = log.bounds(t, partitions);
      Map<String, Map<Integer, Long>> committed = new LinkedHashMap<>();
      for (String g : groups.get()) {
        committed.put(g, log.committed(g, t));
      }
      for (int p : partitions) {
        TopicLog.Bounds b = bounds.get(p);
        if (committed.isEmpty()) {
          out.println(line(p, b).raw('}'));
          continue;
        }
        Long newest = reader.timestampAt(t, p, b.end() - 1, b);
        for (Map.Entry<String, Map<Integer, Long>> g : committed.entrySet()) {
          out.println(groupLine(reader, p, b, newest, g.getKey(), g.getValue().get(p)));
        }
      }
    }
    return 0;
  }

  private JsonWriter line(int partition, TopicLog.Bounds b) {
    JsonWriter w = new JsonWriter(new StringBuilder());
    w.raw("{\"topic\":").string(topic.get()).raw(",\"partition\":").number(partition);
    return w.raw(",\"start\":").number(b.start()).raw(",\"end\":").number(b.end());
  }

  private String groupLine(RecordReader reader, int p, TopicLog.Bounds b, @Nullable Long newest, String group,
      @Nullable Long committed) throws Exception {
    JsonWriter w = line(p, b).raw(",\"group\":").string(group);
    if (committed == null) {
      return w.raw(",\"committed\":null,\"lag\":null,\"lag_ms\":null}").toString();
    }
    long lag = Math.max(0, b.end() - committed);
    w.raw(",\"committed\":").number(committed).raw(",\"lag\":").number(lag).raw(",\"lag_ms\":");
    if (lag == 0) {
      return w.raw("0}").toString();
    }
    Long lastTs = reader.timestampAt(topic.get(), p, committed - 1, b);
    if (newest == null || lastTs == null) {
      return w.raw("null}").toString();
    }
    return w.number(Math.max(0, newest - lastTs)).raw('}').toString();
  }
}
