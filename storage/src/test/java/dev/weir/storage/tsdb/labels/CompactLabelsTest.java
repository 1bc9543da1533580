package dev.weir.storage.tsdb.labels;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

class CompactLabelsTest {
  private static final String[] NAMES = {"__name__", "job", "instance", "pod", "le", "caf\u00e9", "zone", "a"};

  /** Random label sets: short and long names (past the dictionary's 128 bytes), long values, empty values. */
  private static Labels random(Random r) {
    List<String> pairs = new ArrayList<>();
    int n = r.nextInt(24);
    Set<String> names = new java.util.HashSet<>();
    for (int i = 0; i < n; i++) {
      String name = switch (r.nextInt(6)) {
        case 0 -> "n" + "x".repeat(120 + r.nextInt(300)) + r.nextInt(4); // stored in full
        case 1 -> "label_" + r.nextInt(40);
        default -> NAMES[r.nextInt(NAMES.length)];
      };
      if (!names.add(name)) {
        continue;
      }
      String value = switch (r.nextInt(6)) {
        case 0 -> "";
        case 1 -> "v".repeat(100 + r.nextInt(20_000)); // lengths of two and three varint bytes
        case 2 -> "\u00fcber-" + r.nextInt(9);
        default -> "value-" + r.nextInt(1000);
      };
      pairs.add(name);
      pairs.add(value);
    }
    return Labels.of(pairs.toArray(String[]::new));
  }

  @Test
  void roundTripsThroughTheCanonicalEncoding() {
    Random r = new Random(11);
    int[] recent = new int[16];
    for (int i = 0; i < 3_000; i++) {
      Labels l = random(r);
      byte[] canonical = l.encoded().wireEncoding();
      byte[] compact = CompactLabels.fromCanonical(canonical, i % 2 == 0 ? recent : null);
      assertThat(CompactLabels.toCanonical(compact)).isEqualTo(canonical);
      Labels decoded = CompactLabels.decode(compact, l.hashCode());
      assertThat(decoded).isEqualTo(l);
      assertThat(decoded.pairsUnsafe()).containsExactly(l.pairsUnsafe());
      assertThat(CompactLabels.count(compact)).isEqualTo(l.size());
      for (int k = 0; k < l.size(); k++) {
        assertThat(CompactLabels.value(compact, l.name(k).getBytes(StandardCharsets.UTF_8))).isEqualTo(l.value(k));
      }
      assertThat(CompactLabels.value(compact, "absent-name".getBytes(StandardCharsets.UTF_8))).isNull();
      assertThat(CompactLabels.equalsCanonical(compact, canonical, 0, canonical.length)).isTrue();
      assertThat(l.matches(compact)).isTrue();
      // Inside a larger array, as a pushed request's labels are.
      byte[] framed = new byte[canonical.length + 7];
      System.arraycopy(canonical, 0, framed, 3, canonical.length);
      assertThat(CompactLabels.equalsCanonical(compact, framed, 3, 3 + canonical.length)).isTrue();
    }
  }

  @Test
  void isSmallerThanTheCanonicalEncoding() {
    // Names of this test only (the dictionaries are the process', and other tests fill theirs).
    Labels l = Labels.of("cl_size_name", "http_requests_total", "cl_size_cluster", "prod-eu-1",
        "cl_size_container", "app-3", "cl_size_instance", "10.0.3.7:9100", "cl_size_job", "kubernetes-pods-3",
        "cl_size_namespace", "team-7", "cl_size_pod", "app-3-x8a7c", "cl_size_series", "12345",
        "cl_size_method", "GET", "cl_size_status", "200");
    org.junit.jupiter.api.Assumptions.assumeTrue(LabelValues.size() + l.size() <= LabelValues.MAX_VALUES,
        "room for 10 values in the process' dictionary, which holds " + LabelValues.size());
    byte[] canonical = l.encoded().wireEncoding();
    byte[] compact = CompactLabels.fromCanonical(canonical, null);
    int values = 0;
    for (int k = 0; k < l.size(); k++) {
      values += l.value(k).length();
    }
    // 10 labels: 6 framing bytes and the name each in the canonical form; here the name's number
    // (one or two bytes) and the value's (one to three): no text at all.
    assertThat(canonical).hasSize(values + String.join("", l.names()).length() + 6 * l.size());
    assertThat(compact.length).isBetween(2 * l.size(), 5 * l.size());
    assertThat(CompactLabels.toCanonical(compact)).isEqualTo(canonical);
    assertThat(CompactLabels.fromCanonical(canonical, null)).as("one form per label set").isEqualTo(compact);

    // Values past LabelValues.MAX_VALUE_BYTES stay in full: the name's number, a two-byte length
    // (twice the length, as a varint) and the bytes.
    String[] longPairs = l.pairsUnsafe().clone();
    for (int k = 1; k < longPairs.length; k += 2) {
      longPairs[k] = longPairs[k] + "-" + "v".repeat(LabelValues.MAX_VALUE_BYTES);
    }
    Labels longer = Labels.of(longPairs);
    int longValues = 0;
    for (int k = 0; k < longer.size(); k++) {
      longValues += longer.value(k).length();
    }
    byte[] longCompact = CompactLabels.fromCanonical(longer.encoded().wireEncoding(), null);
    assertThat(longCompact.length).isBetween(longValues + 3 * l.size(), longValues + 4 * l.size());
    assertThat(CompactLabels.toCanonical(longCompact)).isEqualTo(longer.encoded().wireEncoding());
  }

  /**
   * Two forms of the same labels (values as numbers, and in full as a process makes them for values
   * its dictionary does not take) hold the same labels, so a lookup that compares forms still
   * finds the series; other labels do not match.
   */
  @Test
  void formsWithValuesInFullOrAsNumbersHoldTheSameLabels() {
    Labels l = Labels.of("cl_same_a", "x", "cl_same_b", "yy", "cl_same_c", "");
    byte[] numbered = CompactLabels.fromCanonical(l.encoded().wireEncoding(), null);
    byte[] inFull = CompactForms.valuesInFull(l);
    org.junit.jupiter.api.Assumptions.assumeFalse(Arrays.equals(numbered, inFull),
        "the process' dictionary took the values (it holds " + LabelValues.size() + ")");
    assertThat(CompactLabels.sameLabels(numbered, inFull)).isTrue();
    assertThat(CompactLabels.sameLabels(inFull, numbered)).isTrue();
    assertThat(CompactLabels.toCanonical(inFull)).isEqualTo(l.encoded().wireEncoding());
    assertThat(SeriesKey.ofCompact(inFull, l.hashCode()).matches(numbered)).isTrue();
    byte[] other = CompactLabels.fromCanonical(Labels.of("cl_same_a", "x", "cl_same_b", "yz", "cl_same_c", "")
        .encoded().wireEncoding(), null);
    byte[] fewer = CompactLabels.fromCanonical(Labels.of("cl_same_a", "x", "cl_same_b", "yy").encoded().wireEncoding(), null);
    assertThat(CompactLabels.sameLabels(numbered, other)).isFalse();
    assertThat(CompactLabels.sameLabels(inFull, fewer)).isFalse();
    assertThat(CompactLabels.sameLabels(fewer, inFull)).isFalse();
    assertThat(SeriesKey.ofCompact(inFull, l.hashCode()).matches(other)).isFalse();
  }

  /** Values in full (a replay reads them so) become the numbers fromCanonical gives, whatever the mix. */
  @Test
  void valuesInFullGetTheNumbersOfTheFormAHeadKeeps() {
    Random r = new Random(13);
    for (int i = 0; i < 2_000; i++) {
      Labels l = random(r);
      byte[] canonical = l.encoded().wireEncoding();
      byte[] inFull = CompactForms.valuesInFull(l);
      byte[] numbered = CompactLabels.withValueNumbers(inFull);
      assertThat(numbered).isEqualTo(CompactLabels.fromCanonical(canonical, null));
      assertThat(CompactLabels.withValueNumbers(numbered)).as("numbers stay").isEqualTo(numbered);
      assertThat(CompactLabels.toCanonical(numbered)).isEqualTo(canonical);
    }
  }

  /** Other labels, a prefix, an extra label, one changed byte: never equal; damaged bytes never throw. */
  @Test
  void otherLabelsAndDamagedBytesAreNotEqual() {
    Random r = new Random(12);
    for (int i = 0; i < 3_000; i++) {
      Labels l = random(r);
      byte[] canonical = l.encoded().wireEncoding();
      byte[] compact = CompactLabels.fromCanonical(canonical, null);
      Labels other = random(r);
      byte[] otherCanonical = other.encoded().wireEncoding();
      assertThat(CompactLabels.equalsCanonical(compact, otherCanonical, 0, otherCanonical.length))
          .isEqualTo(other.equals(l));
      if (canonical.length > 0) {
        assertThat(CompactLabels.equalsCanonical(compact, canonical, 0, canonical.length - 1)).isFalse();
        byte[] damaged = canonical.clone();
        int at = r.nextInt(damaged.length);
        damaged[at] ^= (byte) (1 + r.nextInt(255));
        // Either not equal, or (a flipped length or tag that still reads as these labels) equal
        // only if the damaged bytes decode to the same labels; never an exception.
        boolean eq = CompactLabels.equalsCanonical(compact, damaged, 0, damaged.length);
        if (eq) {
          assertThat(CompactLabels.toCanonical(compact)).isEqualTo(canonical);
        }
        byte[] garbage = new byte[r.nextInt(64)];
        r.nextBytes(garbage);
        CompactLabels.equalsCanonical(compact, garbage, 0, garbage.length);
      }
      Labels longer = Labels.of(append(l.pairsUnsafe(), "zzz_extra", "1"));
      byte[] longerCanonical = longer.encoded().wireEncoding();
      assertThat(CompactLabels.equalsCanonical(compact, longerCanonical, 0, longerCanonical.length)).isFalse();
    }
  }

  private static String[] append(String[] pairs, String name, String value) {
    String[] out = Arrays.copyOf(pairs, pairs.length + 2);
    out[pairs.length] = name;
    out[pairs.length + 1] = value;
    return out;
  }

  /** Protobuf allows the value before the name: equal labels, but not the canonical bytes. */
  @Test
  void aNonCanonicalOrderIsNotEqual() {
    Labels l = Labels.of("job", "api");
    byte[] compact = CompactLabels.fromCanonical(l.encoded().wireEncoding(), null);
    byte[] swapped = {0x0a, 10, 0x12, 3, 'a', 'p', 'i', 0x0a, 3, 'j', 'o', 'b'};
    assertThat(CompactLabels.equalsCanonical(compact, swapped, 0, swapped.length)).isFalse();
  }

  /** A length varint with bits past the 31st is not read as the small length its low bits spell. */
  @Test
  void aLengthWithBitsPastThe31stIsNotEqual() {
    byte[] compact = CompactLabels.fromCanonical(Labels.of("a", "x").encoded().wireEncoding(), null);
    byte[] canonical = {0x0a, 6, 0x0a, 1, 'a', 0x12, 1, 'x'};
    assertThat(CompactLabels.equalsCanonical(compact, canonical, 0, canonical.length)).isTrue();
    byte[] longLength = {0x0a, (byte) 0x86, (byte) 0x80, (byte) 0x80, (byte) 0x80, 0x10, 0x0a, 1, 'a', 0x12, 1, 'x'};
    assertThat(CompactLabels.equalsCanonical(compact, longLength, 0, longLength.length)).isFalse();
    byte[] longName = {0x0a, 6, 0x0a, (byte) 0x81, (byte) 0x80, (byte) 0x80, (byte) 0x80, 0x70, 'a', 0x12, 1, 'x'};
    assertThat(CompactLabels.equalsCanonical(compact, longName, 0, longName.length)).isFalse();
  }

  /** Names whose String hashes are all equal ("Aa" and "BB" spell the same hash) each get their own number. */
  @Test
  void namesWithEqualStringHashesAreDistinct() {
    List<String> names = new ArrayList<>();
    for (int bits = 0; bits < 256; bits++) {
      StringBuilder sb = new StringBuilder("h");
      for (int k = 0; k < 8; k++) {
        sb.append((bits >> k & 1) == 0 ? "Aa" : "BB");
      }
      names.add(sb.toString());
    }
    assertThat(names.stream().mapToInt(String::hashCode).distinct().count()).isEqualTo(1);
    Set<Integer> ids = new java.util.HashSet<>();
    for (String n : names) {
      byte[] b = n.getBytes(StandardCharsets.UTF_8);
      int id = LabelNames.id(b, 0, b.length);
      assertThat(id).isNotNegative();
      assertThat(LabelNames.id(b, 0, b.length)).isEqualTo(id);
      assertThat(LabelNames.string(id)).isEqualTo(n);
      ids.add(id);
    }
    assertThat(ids).hasSize(names.size());
  }

  /** A number the dictionary never handed out fails instead of waiting for an entry forever. */
  @Test
  void aNumberNeverHandedOutFails() {
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> LabelNames.bytes(LabelNames.MAX_NAMES - 1))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("never handed out");
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> LabelNames.string(LabelNames.MAX_NAMES - 1))
        .isInstanceOf(IllegalStateException.class);
  }

  @Test
  void namesPastTheDictionarysLengthAreStoredInFull() {
    String longName = "x".repeat(LabelNames.MAX_NAME_BYTES + 1);
    Labels l = Labels.of(longName, "v", "job", "a");
    byte[] compact = CompactLabels.fromCanonical(l.encoded().wireEncoding(), null);
    assertThat(LabelNames.contains(longName)).isFalse();
    assertThat(LabelNames.contains("job")).isTrue();
    assertThat(new String(compact, StandardCharsets.ISO_8859_1)).contains(longName);
    assertThat(CompactLabels.decode(compact, l.hashCode())).isEqualTo(l);
    CompactLabels.Cursor c = new CompactLabels.Cursor(compact);
    assertThat(c.next()).isTrue();
    assertThat(c.nameId).isNotNegative(); // "job" sorts first
    assertThat(c.next()).isTrue();
    assertThat(c.nameId).isEqualTo(-1);
    assertThat(c.name()).isEqualTo(longName);
  }

  /** Threads adding the same new names at once get one number per name, and names keep theirs. */
  @Test
  void concurrentAdditionsAgreeOnNumbers() throws Exception {
    int threads = 4;
    String prefix = "concurrent_" + System.nanoTime() + "_";
    ConcurrentHashMap<String, Integer> seen = new ConcurrentHashMap<>();
    List<String> failures = java.util.Collections.synchronizedList(new ArrayList<>());
    CountDownLatch start = new CountDownLatch(1);
    Thread[] ts = new Thread[threads];
    for (int t = 0; t < threads; t++) {
      int seed = t;
      ts[t] = new Thread(() -> {
        try {
          start.await();
        } catch (InterruptedException e) {
          return;
        }
        Random r = new Random(seed);
        for (int i = 0; i < 2_000; i++) {
          String name = prefix + r.nextInt(200);
          byte[] b = name.getBytes(StandardCharsets.UTF_8);
          int id = LabelNames.id(b, 0, b.length);
          Integer before = seen.putIfAbsent(name, id);
          if (id < 0 || before != null && before != id || !LabelNames.string(id).equals(name)) {
            failures.add(name + " -> " + id + " (before " + before + ")");
          }
        }
      });
      ts[t].start();
    }
    start.countDown();
    for (Thread t : ts) {
      t.join();
    }
    assertThat(failures).isEmpty();
    assertThat(seen.values()).doesNotHaveDuplicates();
  }
}
