package dev.weir.ingester.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.errors.ClientErrorException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class RateLimitedPushTest {
  final AtomicLong nanos = new AtomicLong(1_000_000_000L);
  final List<String> passed = new ArrayList<>();
  final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  final Limits limited = new Limits(30, 1024, 2048, Duration.ofMinutes(10), 0, 10, 50);
  final RateLimitedPush push = new RateLimitedPush((t, r) -> passed.add(t + ":" + r.getTimeseries(0).getSamplesCount()),
      t -> t.equals("limited") ? limited : Limits.DEFAULT, new IngesterMetrics(registry, System::currentTimeMillis, 0),
      nanos::get);

  static WriteRequest samples(int n) {
    TimeSeries.Builder ts = TimeSeries.newBuilder().addLabels(Label.newBuilder().setName("__name__").setValue("x"));
    for (int i = 0; i < n; i++) {
      ts.addSamples(Sample.newBuilder().setTimestamp(i).setValue(i));
    }
    return WriteRequest.newBuilder().addTimeseries(ts).build();
  }

  @Test
  void burstThenRefillAtTheRate() {
    push.push("limited", samples(30));
    push.push("limited", samples(20));
    assertThatThrownBy(() -> push.push("limited", samples(1)))
        .isInstanceOfSatisfying(ClientErrorException.class, e -> {
          assertThat(e.httpStatus()).isEqualTo(429);
          assertThat(e.reason()).isEqualTo("rate_limited");
        });
    nanos.addAndGet(Duration.ofSeconds(2).toNanos()); // 20 tokens back
    push.push("limited", samples(20));
    assertThatThrownBy(() -> push.push("limited", samples(1))).isInstanceOf(ClientErrorException.class);
    nanos.addAndGet(Duration.ofHours(1).toNanos()); // never more than the burst
    assertThatThrownBy(() -> push.push("limited", samples(51))).isInstanceOf(ClientErrorException.class);
    push.push("limited", samples(50));
    assertThat(passed).containsExactly("limited:30", "limited:20", "limited:20", "limited:50");
    assertThat(registry.get("weir.discarded.samples").tag("reason", "rate_limited").counter().count()).isEqualTo(53);
  }

  @Test
  void globalStrategyAdmitsTheLimitDividedByHealthyDistributors() {
    AtomicInteger distributors = new AtomicInteger(2);
    Limits l = new Limits(30, 1024, 2048, Duration.ofMinutes(10), 0, 100, 50);
    RateLimitedPush global = new RateLimitedPush((t, r) -> passed.add(t), t -> l,
        new IngesterMetrics(registry, System::currentTimeMillis, 0), nanos::get,
        IngestionRateStrategy.global(distributors::get));
    global.push("t", samples(50)); // the burst is not divided
    nanos.addAndGet(Duration.ofSeconds(1).toNanos()); // 100/s shared by 2: 50 tokens back
    global.push("t", samples(50));
    assertThatThrownBy(() -> global.push("t", samples(1))).isInstanceOfSatisfying(ClientErrorException.class,
        e -> assertThat(e.getMessage()).contains("100.0 samples/s across all distributors")
            .contains("2 healthy in the distributor ring: 50.0 samples/s here"));
    distributors.set(4);
    nanos.addAndGet(Duration.ofSeconds(1).toNanos()); // 25 tokens
    assertThatThrownBy(() -> global.push("t", samples(26))).isInstanceOf(ClientErrorException.class);
    global.push("t", samples(25));
    distributors.set(1);
    nanos.addAndGet(Duration.ofMillis(400).toNanos()); // alone: 40 tokens
    global.push("t", samples(40));
    assertThat(passed).hasSize(4);
  }

  @Test
  void globalShareArithmetic() {
    assertThat(IngestionRateStrategy.share(10_000, 1)).isEqualTo(10_000);
    assertThat(IngestionRateStrategy.share(10_000, 3)).isCloseTo(3333.333, org.assertj.core.data.Offset.offset(0.001));
    assertThat(IngestionRateStrategy.share(10_000, 0)).as("no distributor in view: the whole limit").isEqualTo(10_000);
    Limits l = new Limits(30, 1024, 2048, Duration.ofMinutes(10), 0, 9000, 50);
    assertThat(IngestionRateStrategy.global(() -> 3).rate(l)).isEqualTo(3000);
    assertThat(IngestionRateStrategy.local().rate(l)).as("local ignores the ring").isEqualTo(9000);
  }

  @Test
  void zeroRateMeansUnlimitedAndTenantsAreIndependent() {
    for (int i = 0; i < 100; i++) {
      push.push("free", samples(1_000));
    }
    push.push("limited", samples(50));
    assertThat(passed).hasSize(101);
  }
}
