package dev.weir.storage.tsdb.head;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class PostingListTest {
  /** Differences of every varint length (1 to 5 bytes), up to the largest ref. */
  @Test
  void keepsIncreasingRefsOfEveryGapExactly() {
    Random r = new Random(3);
    for (int round = 0; round < 200; round++) {
      PostingList l = new PostingList();
      List<Integer> want = new ArrayList<>();
      long ref = 0;
      int n = r.nextInt(300);
      for (int i = 0; i < n; i++) {
        long gap = 1 + ((long) r.nextInt(128) << (r.nextInt(4) * 7)); // 1 to 4 varint bytes
        if (ref + gap >= (1L << 30)) {
          break;
        }
        ref += gap;
        l.add((int) ref);
        want.add((int) ref);
      }
      l.add(Integer.MAX_VALUE); // a gap of 2^30 or more: 5 bytes
      want.add(Integer.MAX_VALUE);
      assertThat(l.size()).isEqualTo(want.size());
      assertThat(l.snapshot()).containsExactly(want.stream().mapToInt(Integer::intValue).toArray());
    }
  }

  /**
   * What a reader holding an older size can find after a retain() made the list shorter and an
   * add() is writing into the padding: a half-written entry (a first byte with its continuation
   * bit, then the padding's 0 or the array's end) is dropped, never read as a smaller ref.
   */
  @Test
  void aHalfWrittenEntryInThePaddingIsNotRead() {
    byte c8 = (byte) 0xC8; // 200 is C8 01: the first byte alone would read as 72
    assertThat(PostingList.decode(new byte[] {1, c8, 0, 0}, 4)).containsExactly(1);
    assertThat(PostingList.decode(new byte[] {1, c8}, 3)).containsExactly(1);
    assertThat(PostingList.decode(new byte[] {1, c8, 1, 0}, 3)).containsExactly(1, 201);
    assertThat(PostingList.decode(new byte[] {1, 2, 0, 0}, 4)).containsExactly(1, 3);
    assertThat(PostingList.decode(new byte[] {1, 2, 3}, 2)).containsExactly(1, 3);
  }

  @Test
  void anEntryCostsOneByteWhenRefsAreCloseTogether() {
    PostingList l = new PostingList();
    long grown = 0;
    for (int ref = 1; ref <= 100_000; ref += 3) {
      grown += l.add(ref);
    }
    // 33,334 one-byte entries in an array grown by half each time: at most 1.5 bytes per entry.
    assertThat(l.arrayBytes()).isEqualTo(16 + 4 + grown).isLessThan(16 + 50_001);
  }

  @Test
  void aRefNotAfterTheNewestIsMergedInOrderOnce() {
    PostingList l = new PostingList();
    for (int ref : new int[] {10, 20, 300, 40_000}) {
      l.add(ref);
    }
    l.add(15);
    l.add(20); // present already
    l.add(1);
    l.add(50_000); // and appending continues after the rewrite
    assertThat(l.snapshot()).containsExactly(1, 10, 15, 20, 300, 40_000, 50_000);
    assertThat(l.size()).isEqualTo(7);
    assertThatThrownBy(() -> l.add(0)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void retainKeepsTheAcceptedRefsAndAppendingGoesOn() {
    Random r = new Random(5);
    PostingList l = new PostingList();
    TreeSet<Integer> want = new TreeSet<>();
    int ref = 0;
    for (int i = 0; i < 5_000; i++) {
      ref += 1 + r.nextInt(r.nextBoolean() ? 5 : 70_000);
      l.add(ref);
      want.add(ref);
    }
    long before = l.arrayBytes();
    long change = l.retain(x -> x % 3 == 0);
    want.removeIf(x -> x % 3 != 0);
    assertThat(l.snapshot()).containsExactly(want.stream().mapToInt(Integer::intValue).toArray());
    assertThat(l.arrayBytes()).isEqualTo(before + change).isLessThan(before);
    l.add(ref + 1);
    want.add(ref + 1);
    assertThat(l.snapshot()).containsExactly(want.stream().mapToInt(Integer::intValue).toArray());
    l.retain(x -> false);
    assertThat(l.size()).isZero();
    assertThat(l.snapshot()).isEmpty();
  }

  /**
   * Readers without a lock while one writer appends and retains: every snapshot is sorted, holds
   * only refs that were added, and while only appends happen, is a prefix of what was added.
   */
  @Test
  void lockFreeReadersSeeSortedPublishedRefs() throws Exception {
    PostingList l = new PostingList();
    int total = 300_000;
    AtomicBoolean done = new AtomicBoolean();
    AtomicReference<String> failure = new AtomicReference<>();
    Thread[] readers = new Thread[2];
    for (int t = 0; t < readers.length; t++) {
      readers[t] = new Thread(() -> {
        while (!done.get() && failure.get() == null) {
          int[] s = l.snapshot();
          for (int i = 0; i < s.length; i++) {
            if (s[i] <= 0 || (i > 0 && s[i] <= s[i - 1])) {
              failure.set("not sorted or not positive at " + i + ": " + Arrays.toString(
                  Arrays.copyOfRange(s, Math.max(0, i - 2), Math.min(s.length, i + 2))));
              return;
            }
          }
        }
      });
      readers[t].start();
    }
    int ref = 0;
    for (int i = 0; i < total; i++) {
      ref += i % 1_000 == 0 ? 20_000 : 7;
      l.add(ref);
      if (i % 20_000 == 10_000) {
        l.retain(x -> x % 5 != 0); // a rewrite in a new array while readers read the old one
      }
    }
    done.set(true);
    for (Thread t : readers) {
      t.join();
    }
    assertThat(failure.get()).isNull();
    int[] end = l.snapshot();
    assertThat(end).isSorted().hasSize(l.size());
    assertThat(end[end.length - 1]).isEqualTo(ref);
  }
}
