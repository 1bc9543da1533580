package dev.weir.ring.kv;

import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;

/**
 * A small key-value store for ring descriptors (values are serialized protobuf messages). Keys
 * are relative: the implementation prepends its configured prefix.
 *
 * <p>Implementations are thread-safe. {@link #close()} stops all watches.
 */
public interface KvStore extends AutoCloseable {
  /**
   * The current value, or null when the key does not exist.
   *
   * @throws KvException when the store cannot be reached
   */
  byte @Nullable [] get(String key);

  /**
   * Atomically updates a key: {@code update} receives the current value (null when missing) and
   * returns the new value, or null to leave it unchanged. When another writer changed the key in
   * between (compare on the version), {@code update} is called again with the newer value, up to
   * the store's retry limit.
   *
   * @return the value now stored (the new one, or the current one when unchanged)
   * @throws KvException when the store cannot be reached or conflicts persisted past the limit
   */
  byte @Nullable [] cas(String key, UnaryOperator<byte @Nullable []> update);

  /** Deletes a key (no error when missing). */
  void delete(String key);

  /**
   * Watches a key. The listener gets the current value first, then every change (null when the
   * key is deleted), on one thread per watch. After the store was unreachable the watch
   * reconnects by itself and resynchronizes with the current value.
   */
  Watch watch(String key, WatchListener listener);

  /** Full key (with prefix) as stored, for operators. */
  String fullKey(String key);

  @Override
  void close();

  /** Receives a watched key's values and the watch's connection state. */
  interface WatchListener {
    void onValue(byte @Nullable [] value);

    /** The watch lost (connected=false, with the reason) or regained its connection. */
    default void onConnection(boolean connected, @Nullable String reason) {}
  }

  /** A running watch; closing it stops the notifications. */
  interface Watch extends AutoCloseable {
    @Override
    void close();
  }
}
