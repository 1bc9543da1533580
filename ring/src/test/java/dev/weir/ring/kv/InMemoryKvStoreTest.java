package dev.weir.ring.kv;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

class InMemoryKvStoreTest {
  static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void casSeesTheCurrentValueAndWatchersSeeEveryChangeInOrder() {
    try (InMemoryKvStore kv = new InMemoryKvStore()) {
      List<String> seen = new CopyOnWriteArrayList<>();
      kv.watch("k", v -> seen.add(v == null ? "<none>" : new String(v, StandardCharsets.UTF_8)));
      for (int i = 0; i < 100; i++) {
        int n = i;
        kv.cas("k", cur -> {
          assertThat(cur == null ? -1 : Integer.parseInt(new String(cur, StandardCharsets.UTF_8))).isEqualTo(n - 1);
          return b(String.valueOf(n));
        });
      }
      assertThat(kv.cas("k", cur -> null)).isEqualTo(b("99"));
      kv.delete("k");
      await().until(() -> seen.size() == 102);
      assertThat(seen.get(0)).isEqualTo("<none>");
      assertThat(seen.get(1)).isEqualTo("0");
      assertThat(seen.get(100)).isEqualTo("99");
      assertThat(seen.get(101)).isEqualTo("<none>");
      assertThat(kv.get("k")).isNull();
    }
  }
}
