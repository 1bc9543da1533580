package dev.weir.storage.tsdb.wal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.storage.testing.Corrupt;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.util.ByteSink;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Prometheus' page framing: fragments per page, padding, records across pages and segments, and
 * what a reader (and replay) makes of a torn or corrupt fragment of each kind.
 */
class WalPagesTest {
  static final int PAGE = WalPages.PAGE_BYTES;
  @TempDir Path dir;
  private final WalMetrics metrics = WalMetrics.noop();

  /** A logical record of type 2 (samples) whose payload is {@code len} bytes, filled with {@code fill}. */
  private static void record(ByteSink logical, int len, int fill) {
    int start = WalRecords.begin(logical, WalRecords.TYPE_SAMPLES);
    for (int i = 1; i < len; i++) {
      logical.put(fill);
    }
    WalRecords.end(logical, start);
  }

  /** The fragments in framed bytes: "type@offset+length". */
  private static List<String> fragments(byte[] framed) {
    List<String> out = new ArrayList<>();
    int p = 0;
    while (p < framed.length) {
      int type = framed[p] & 0xff;
      if (type == 0) {
        p += PAGE - p % PAGE;
        continue;
      }
      int len = ((framed[p + 1] & 0xff) << 8) | (framed[p + 2] & 0xff);
      CRC32C crc = new CRC32C();
      crc.update(framed, p + 7, len);
      assertThat(ByteBuffer.wrap(framed).getInt(p + 3)).as("crc at %d", p).isEqualTo((int) crc.getValue());
      assertThat(p % PAGE + 7 + len).as("fragment at %d stays in its page", p).isLessThanOrEqualTo(PAGE);
      out.add(type + "@" + p + "+" + len);
      p += 7 + len;
    }
    return out;
  }

  private static byte[] frame(ByteSink logical, long pos) {
    ByteSink out = new ByteSink(64);
    WalPages.frame(logical, pos, out);
    return out.toByteArray();
  }

  @Test
  void smallRecordsAreFullFragmentsAndAPageWithTooLittleRoomIsPadded() {
    ByteSink logical = new ByteSink(64);
    record(logical, 100, 1);
    record(logical, PAGE - 107 - 7 - 3, 2); // leaves 3 bytes in the page: less than a header
    record(logical, 10, 3);
    byte[] framed = frame(logical, 0);
    assertThat(fragments(framed)).containsExactly("1@0+100", "1@107+" + (PAGE - 117), "1@" + PAGE + "+10");
    assertThat(Arrays.copyOfRange(framed, PAGE - 3, PAGE)).containsOnly(0);
  }

  @Test
  void aRecordLongerThanAPageIsSplitIntoFirstMiddleAndLast() {
    ByteSink logical = new ByteSink(64);
    int len = 2 * PAGE + 1000;
    record(logical, len, 7);
    byte[] framed = frame(logical, 0);
    int room = PAGE - 7;
    assertThat(fragments(framed)).containsExactly("2@0+" + room, "3@" + PAGE + "+" + room,
        "4@" + 2 * PAGE + "+" + (len - 2 * room));
    WalPages.Reader r = new WalPages.Reader(ByteBuffer.wrap(framed), 0, framed.length);
    ByteBuffer payload = r.next();
    assertThat(payload).isNotNull();
    assertThat(payload.remaining()).isEqualTo(len);
    assertThat(r.next()).isNull();
    assertThat(r.damageAt()).isEqualTo(-1);
  }

  @Test
  void aBatchFramedInTheMiddleOfAPageFillsThatPageFirst() {
    ByteSink logical = new ByteSink(64);
    record(logical, 1000, 1);
    long pos = 3L * PAGE + PAGE - 500; // 500 bytes left in the current page
    assertThat(fragments(frame(logical, pos))).containsExactly("2@0+493", "4@500+507");
  }

  /** Appends {@code n} records of a size through a WAL with the given segment size. */
  private void appendRecords(long segmentBytes, int n, int size) throws Exception {
    try (Wal wal = Wal.open(dir, segmentBytes, Wal.DEFAULT_OPENER, metrics, "t")) {
      for (int i = 0; i < n; i++) {
        ByteSink b = new ByteSink(size + 8);
        WalRecords.source(b, 1000 + i);
        int start = WalRecords.begin(b, WalRecords.TYPE_SERIES);
        b.putBe64(i + 1).putUvarint(1).putString("__name__").putString("x".repeat(size));
        WalRecords.end(b, start);
        wal.append(b);
      }
    }
  }

  /** Replays {@link #dir}: "source" offsets and series refs seen. */
  private List<String> replay(boolean repair) throws Exception {
    List<String> seen = new ArrayList<>();
    WalReader.replay(dir, new WalRecords.Visitor() {
      @Override
      public void series(int ref, Labels labels) {
        seen.add("s" + ref + ":" + labels.get("__name__").length());
      }

      @Override
      public void sample(int ref, long t, double v) {
        seen.add("x" + ref);
      }

      @Override
      public void source(long offset) {
        seen.add("o" + offset);
      }
    }, repair, metrics, "t");
    return seen;
  }

  @Test
  void recordsLargerThanAPageAndThanTheSegmentRemainderRoundTrip() throws Exception {
    appendRecords(100_000, 5, 70_000); // ~3 pages each: every append after the first rolls
    assertThat(Wal.segments(dir)).containsExactly(0, 1, 2, 3, 4);
    assertThat(replay(false)).containsExactly("o1000", "s1:70000", "o1001", "s2:70000", "o1002", "s3:70000",
        "o1003", "s4:70000", "o1004", "s5:70000");
  }

  /** The byte offset of the {@code k}-th fragment of the given type in a segment. */
  private static int fragmentOffset(Path segment, int type, int k) throws Exception {
    byte[] b = Files.readAllBytes(segment);
    int seen = 0;
    for (String f : fragments(b)) {
      if (f.startsWith(type + "@") && seen++ == k) {
        return Integer.parseInt(f.substring(2, f.indexOf('+')));
      }
    }
    throw new AssertionError("no fragment of type " + type);
  }

  @Test
  void aTornTailInAnyFragmentKindIsTruncatedAtTheRecordStart() throws Exception {
    for (int type : new int[] {WalPages.FIRST, WalPages.MIDDLE, WalPages.LAST}) {
      Checkpoint.deleteRecursively(dir);
      appendRecords(1 << 20, 2, 70_000);
      Path seg = Wal.segmentPath(dir, 0);
      int second = fragmentOffset(seg, WalPages.FIRST, 1);
      int cut = fragmentOffset(seg, type, 1) + 20; // inside the second big record's fragment
      Corrupt.truncate(seg, cut);
      WalMetrics m = WalMetrics.noop();
      WalReader.Result r = WalReader.replay(dir, new WalTest.Recorder(), false, m, "t");
      assertThat(r.repairedTail()).as("type %d", type).isTrue();
      assertThat(r.damageOffset()).as("the record's first fragment").isEqualTo(second);
      assertThat(Files.size(seg)).isEqualTo(second);
      assertThat(replay(false)).as("type %d", type).containsExactly("o1000", "s1:70000", "o1001");
    }
  }

  @Test
  void aCorruptMiddleFragmentWithRecordsAfterItIsCorruptionInTheMiddle() throws Exception {
    appendRecords(1 << 20, 4, 70_000);
    Path seg = Wal.segmentPath(dir, 0);
    int second = fragmentOffset(seg, WalPages.FIRST, 1);
    Corrupt.flipByte(seg, fragmentOffset(seg, WalPages.MIDDLE, 1) + 100);
    WalReader.Result r = WalReader.replay(dir, new WalTest.Recorder(), true, metrics, "t");
    assertThat(r.repairedCorruption()).isTrue();
    assertThat(r.damageOffset()).isEqualTo(second);
    assertThat(r.droppedRecords()).as("2 SOURCE and 2 SERIES records after the damaged one").isEqualTo(4);
    assertThat(r.firstDroppedSourceOffset()).isEqualTo(1001);
    assertThat(replay(false)).containsExactly("o1000", "s1:70000", "o1001");
  }

  @Test
  void aCompressedFragmentIsReportedAsUnsupported() {
    ByteSink logical = new ByteSink(64);
    record(logical, 10, 1);
    byte[] framed = frame(logical, 0);
    framed[0] |= 0x08; // snappy flag
    WalPages.Reader r = new WalPages.Reader(ByteBuffer.wrap(framed), 0, framed.length);
    assertThat(r.next()).isNull();
    assertThat(r.damageAt()).isZero();
    assertThat(r.damage()).contains("unsupported fragment flags 0x08");
  }

  @Test
  void nonZeroBytesInPagePaddingAreDamage() {
    byte[] b = new byte[100];
    b[50] = 9;
    WalPages.Reader r = new WalPages.Reader(ByteBuffer.wrap(b), 0, b.length);
    assertThat(r.next()).isNull();
    assertThat(r.damage()).contains("non-zero byte in page padding at offset 50");
  }

  @Test
  void payloadsAreInPrometheusEncodings() {
    ByteSink b = new ByteSink(64);
    WalRecords.series(b, new int[] {5}, new Labels[] {Labels.of("a", "b")}, 1);
    assertThat(payload(b)).containsExactly(1, 0, 0, 0, 0, 0, 0, 0, 5, 1, 1, 'a', 1, 'b');
    b.reset();
    WalRecords.samples(b, new int[] {3, 4}, new long[] {1000, 1001}, new double[] {1, 2}, 2);
    ByteBuffer expected = ByteBuffer.allocate(1 + 16 + 2 + 8 + 2 + 8);
    expected.put((byte) 2).putLong(3).putLong(1000).put((byte) 0).put((byte) 0).putDouble(1);
    expected.put((byte) 2).put((byte) 2).putDouble(2); // zig-zag +1 = 2
    assertThat(payload(b)).containsExactly(toInts(expected.array()));
    b.reset();
    WalRecords.source(b, 77);
    ByteBuffer src = ByteBuffer.allocate(1 + 16 + 2 + 8);
    src.put((byte) 2).putLong(-1L).putLong(77).put((byte) 0).put((byte) 0).putDouble(0);
    assertThat(payload(b)).containsExactly(toInts(src.array()));
  }

  @Test
  void payloadsRoundTrip() {
    ByteSink b = new ByteSink(64);
    WalRecords.source(b, Long.MAX_VALUE - 1);
    WalRecords.series(b, new int[] {1, Integer.MAX_VALUE}, new Labels[] {Labels.of("__name__", "m", "x", "ü"),
        Labels.of("__name__", "n")}, 2);
    WalRecords.samples(b, new int[] {Integer.MAX_VALUE, 1}, new long[] {Long.MIN_VALUE / 2, Long.MAX_VALUE / 2},
        new double[] {Double.NaN, -0.0}, 2);
    byte[] framed = frame(b, 0);
    WalPages.Reader r = new WalPages.Reader(ByteBuffer.wrap(framed), 0, framed.length);
    List<String> seen = new ArrayList<>();
    WalRecords.Visitor v = new WalRecords.Visitor() {
      @Override
      public void series(int ref, Labels labels) {
        seen.add("s " + ref + " " + labels);
      }

      @Override
      public void sample(int ref, long t, double val) {
        seen.add("x " + ref + " " + t + " " + Double.doubleToRawLongBits(val));
      }

      @Override
      public void source(long offset) {
        seen.add("o " + offset);
      }
    };
    for (ByteBuffer p = r.next(); p != null; p = r.next()) {
      WalRecords.decode(p, v);
    }
    assertThat(seen).containsExactly("o " + (Long.MAX_VALUE - 1), "s 1 m{x=\"ü\"}", "s " + Integer.MAX_VALUE
        + " n{}", "x " + Integer.MAX_VALUE + " " + Long.MIN_VALUE / 2 + " " + Double.doubleToRawLongBits(Double.NaN),
        "x 1 " + Long.MAX_VALUE / 2 + " " + Double.doubleToRawLongBits(-0.0));
  }

  /** The payload of the single logical record in {@code b}. */
  private static int[] payload(ByteSink b) {
    byte[] all = b.toByteArray();
    assertThat(ByteBuffer.wrap(all).getInt(0)).isEqualTo(all.length - 4);
    return toInts(Arrays.copyOfRange(all, 4, all.length));
  }

  private static int[] toInts(byte[] b) {
    int[] out = new int[b.length];
    for (int i = 0; i < b.length; i++) {
      out[i] = b[i] & 0xff;
    }
    return out;
  }
}
