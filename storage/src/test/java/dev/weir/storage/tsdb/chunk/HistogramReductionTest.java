package dev.weir.storage.tsdb.chunk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class HistogramReductionTest {
  private static NativeHistogram hist(int schema, int[] pos, double[] pb, int[] neg, double[] nb) {
    double count = 3;
    for (double b : pb) {
      count += b;
    }
    for (double b : nb) {
      count += b;
    }
    return new NativeHistogram(false, NativeHistogram.RESET_NO, schema, 0.01, 3, count, 99, pos, pb, neg, nb,
        new double[0]);
  }

  @Test
  void mergesPairsOfBucketsOneSchemaDown() {
    // Schema 1 buckets 1..4 and 7: at schema 0, index i goes to ((i - 1) >> 1) + 1: 1,2 -> 1; 3,4 -> 2; 7 -> 4.
    NativeHistogram h = hist(1, new int[] {1, 4, 2, 1}, new double[] {1, 2, 3, 4, 5}, new int[0], new double[0]);
    NativeHistogram r = HistogramReduction.toSchema(h, 0);
    assertThat(r.schema()).isZero();
    assertThat(r.positiveSpans()).containsExactly(1, 2, 1, 1);
    assertThat(r.positiveBuckets()).containsExactly(3, 7, 5);
    assertThat(r.count()).isEqualTo(h.count());
    assertThat(r.sum()).isEqualTo(h.sum());
    assertThat(r.zeroCount()).isEqualTo(3);
    assertThat(r.isFloat()).isFalse();
    assertThat(r.checkLayout()).isNull();
  }

  @Test
  void mergesNegativeAndNonPositiveIndexesAsPrometheusDoes() {
    // Indexes -1, 0 at schema 2 -> two steps down (shift 2): ((-2) >> 2) + 1 = 0, ((-1) >> 2) + 1 = 0.
    NativeHistogram h = hist(2, new int[] {-1, 2}, new double[] {4, 6}, new int[] {0, 3}, new double[] {1, 1, 1});
    NativeHistogram r = HistogramReduction.toSchema(h, 0);
    assertThat(r.positiveSpans()).containsExactly(0, 1);
    assertThat(r.positiveBuckets()).containsExactly(10);
    // Negative 0, 1, 2 -> 0, 1, 1.
    assertThat(r.negativeSpans()).containsExactly(0, 2);
    assertThat(r.negativeBuckets()).containsExactly(1, 2);
  }

  @Test
  void reducesUntilWithinTheBucketLimit() {
    double[] b = new double[40];
    java.util.Arrays.fill(b, 1);
    NativeHistogram h = hist(3, new int[] {1, 40}, b, new int[0], new double[0]);
    NativeHistogram r = HistogramReduction.withinBuckets(h, 10);
    assertThat(r).isNotNull();
    assertThat(r.bucketCount()).isLessThanOrEqualTo(10);
    // 40 buckets at schema 3 -> 20 at 2 -> 10 at 1: the first schema within the limit.
    assertThat(r.schema()).isEqualTo(1);
    assertThat(java.util.Arrays.stream(r.positiveBuckets()).sum()).isEqualTo(40);
    assertThat(HistogramReduction.withinBuckets(h, 40)).isSameAs(h);
  }

  @Test
  void cannotReduceBelowTheLowestSchemaOrCustomBuckets() {
    NativeHistogram low = hist(-4, new int[] {1, 1, 5, 1}, new double[] {1, 1}, new int[0], new double[0]);
    assertThat(HistogramReduction.withinBuckets(low, 1)).isNull();
    NativeHistogram custom = new NativeHistogram(true, 0, NativeHistogram.CUSTOM_BUCKETS_SCHEMA, 0, 0, 3, 1,
        new int[] {0, 3}, new double[] {1, 1, 1}, new int[0], new double[0], new double[] {1, 2});
    assertThat(HistogramReduction.withinBuckets(custom, 2)).isNull();
    assertThatThrownBy(() -> HistogramReduction.toSchema(custom, 0)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void keepsFloatHistogramsFloat() {
    NativeHistogram f = new NativeHistogram(true, 0, 1, 0, 0.5, 3.5, 1, new int[] {1, 2}, new double[] {1.25, 1.75},
        new int[0], new double[0], new double[0]);
    NativeHistogram r = HistogramReduction.toSchema(f, 0);
    assertThat(r.isFloat()).isTrue();
    assertThat(r.positiveBuckets()).containsExactly(3.0);
  }
}
