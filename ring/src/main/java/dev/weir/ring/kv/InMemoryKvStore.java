package dev.weir.ring.kv;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;

/**
 * The KV store of a single process (the default): a map with versions, so CAS and watches behave
 * as they do on etcd. Watch notifications are delivered in order on one named thread, never on
 * the writer's thread.
 *
 * <p>Thread-safe.
 */
public final class InMemoryKvStore implements KvStore {
  private record Entry(byte[] value, long version) {}

  private final Map<String, Entry> data = new HashMap<>();
  private final Map<String, List<KvStore.WatchListener>> watchers = new HashMap<>();
  private final ExecutorService notifier = Executors.newSingleThreadExecutor(r -> {
    Thread t = new Thread(r, "kv-inmemory-watch");
    t.setDaemon(true);
    return t;
  });
  private long version;

  @Override
  public synchronized byte @Nullable [] get(String key) {
    Entry e = data.get(key);
    return e == null ? null : e.value.clone();
  }

  @Override
  public byte @Nullable [] cas(String key, UnaryOperator<byte @Nullable []> update) {
    // One attempt suffices: the update runs under the store's lock, so nothing can interleave.
    synchronized (this) {
      Entry e = data.get(key);
      byte[] current = e == null ? null : e.value.clone();
      byte[] next = update.apply(current);
      if (next == null || (current != null && Arrays.equals(current, next))) {
        return current;
      }
      data.put(key, new Entry(next.clone(), ++version));
      notifyLocked(key, next.clone());
      return next;
    }
  }

  @Override
  public synchronized void delete(String key) {
    if (data.remove(key) != null) {
      notifyLocked(key, null);
    }
  }

  private void notifyLocked(String key, byte @Nullable [] value) {
    for (KvStore.WatchListener l : watchers.getOrDefault(key, List.of())) {
      notifier.execute(() -> l.onValue(value));
    }
  }

  @Override
  public synchronized Watch watch(String key, WatchListener listener) {
    watchers.computeIfAbsent(key, k -> new ArrayList<>()).add(listener);
    Entry e = data.get(key);
    byte[] initial = e == null ? null : e.value.clone();
    notifier.execute(() -> {
      listener.onConnection(true, null);
      listener.onValue(initial);
    });
    return () -> {
      synchronized (InMemoryKvStore.this) {
        List<KvStore.WatchListener> l = watchers.get(key);
        if (l != null) {
          l.remove(listener);
        }
      }
    };
  }

  @Override
  public String fullKey(String key) {
    return key;
  }

  @Override
  public void close() {
    notifier.shutdownNow();
  }
}
