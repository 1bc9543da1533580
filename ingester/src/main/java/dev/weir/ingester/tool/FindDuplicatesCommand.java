package dev.weir.ingester.tool;

import dev.weir.ingester.api.JsonWriter;
import dev.weir.ingester.config.Flag;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * {@code weir tool find-duplicates}: records of a range that occur more than once — the same
 * key (tenant) and the same value bytes, compared by a 128-bit prefix of their SHA-256 — one JSON
 * line per group with every offset, in the order of first occurrence. Exit code 1 when any is
 * found. Memory: about 100 bytes per record of the range.
 */
final class FindDuplicatesCommand extends ToolCommand {
  private final KafkaToolFlags kafka = new KafkaToolFlags(flags);
  private final Flag<String> topic = flags.string("topic", "", "Topic (required).");
  private final RangeFlags range = new RangeFlags(flags);

  /** Records with the same hash: the tenant and every offset. */
  private record Group(String tenant, List<Long> offsets) {}

  /** The first 128 bits of a record's SHA-256. */
  private record Hash(long hi, long lo) {
    @Override
    public String toString() {
      return HexFormat.of().formatHex(ByteBuffer.allocate(16).putLong(hi).putLong(lo).array());
    }
  }

  @Override
  String name() {
    return "find-duplicates";
  }

  @Override
  String summary() {
    return "Records of a range with the same tenant and payload, as JSON lines with their offsets.";
  }

  @Override
  int run(List<String> args, PrintStream out, PrintStream err) throws Exception {
    RangeFlags.Range r = KafkaRanges.resolve(kafka, topic, range, args);
    Map<Hash, Group> seen = new LinkedHashMap<>();
    MessageDigest sha = MessageDigest.getInstance("SHA-256");
    long read;
    try (RecordReader reader = new RecordReader(kafka)) {
      read = reader.read(r, rec -> seen.computeIfAbsent(hash(sha, rec), h -> new Group(tenant(rec),
          new ArrayList<>(1))).offsets().add(rec.offset()));
    }
    long duplicates = 0;
    int groups = 0;
    for (Map.Entry<Hash, Group> e : seen.entrySet()) {
      List<Long> offsets = e.getValue().offsets();
      if (offsets.size() < 2) {
        continue;
      }
      groups++;
      duplicates += offsets.size() - 1;
      JsonWriter w = new JsonWriter(new StringBuilder()).raw("{\"tenant\":").string(e.getValue().tenant());
      w.raw(",\"hash\":").string(e.getKey().toString()).raw(",\"count\":").number(offsets.size());
      w.raw(",\"offsets\":").raw(offsets.toString().replace(" ", "")).raw('}');
      out.println(w);
    }
    if (groups == 0) {
      return 0;
    }
    out.flush();
    err.println("weir tool find-duplicates: " + duplicates + " duplicate records in " + groups + " groups among "
        + read + " records of " + r.topic() + " partition " + r.partition() + " offsets [" + r.from() + ", "
        + r.to() + ")");
    return ToolException.FAILURE;
  }

  private static Hash hash(MessageDigest sha, ConsumerRecord<byte[], byte[]> rec) {
    byte[] key = rec.key() == null ? new byte[0] : rec.key();
    sha.reset();
    sha.update(ByteBuffer.allocate(4).putInt(key.length).array());
    sha.update(key);
    if (rec.value() != null) {
      sha.update(rec.value());
    }
    ByteBuffer d = ByteBuffer.wrap(sha.digest());
    return new Hash(d.getLong(), d.getLong());
  }

  private static String tenant(ConsumerRecord<byte[], byte[]> rec) {
    return rec.key() == null ? "" : new String(rec.key(), StandardCharsets.UTF_8);
  }
}
