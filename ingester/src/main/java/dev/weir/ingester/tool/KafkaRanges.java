package dev.weir.ingester.tool;

import dev.weir.ingester.config.Flag;
import java.util.List;

/** Checks the flags of a subcommand that reads a range, and resolves the range. Stateless. */
final class KafkaRanges {
  private KafkaRanges() {}

  static RangeFlags.Range resolve(KafkaToolFlags kafka, Flag<String> topic, RangeFlags range, List<String> args)
      throws ToolException {
    kafka.validate();
    if (topic.get().isEmpty()) {
      throw ToolException.usage("--" + topic.name() + " is required");
    }
    if (!args.isEmpty()) {
      throw ToolException.usage("unexpected argument " + args.get(0));
    }
    range.validate();
    try (TopicLog log = new TopicLog(kafka)) {
      return range.resolve(log, topic.get());
    }
  }
}
