package dev.weir.ring.kv;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import io.netty.handler.ssl.util.InsecureTrustManagerFactory;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.UnaryOperator;
import javax.net.ssl.SSLException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The KV store on etcd, through a narrow facade over jetcd. CAS is an etcd transaction comparing
 * the key's mod revision (or absence) with what was read, retried on conflict up to
 * {@link KvConfig#maxRetries()}. Each watch runs its own loop: read the key, watch from the next
 * revision, check the connection when quiet; on any failure it reports the loss, backs off, and
 * starts over with a fresh read, so it survives etcd restarts and compactions.
 *
 * <p>Thread-safe.
 */
public final class EtcdKvStore implements KvStore {
  private static final Logger log = LoggerFactory.getLogger(EtcdKvStore.class);
  /** How long a watch may stay silent before it checks that etcd still answers. */
  private static final long QUIET_CHECK_MILLIS = 5_000;
  private static final long MAX_BACKOFF_MILLIS = 5_000;

  private final KvConfig config;
  private final KvMetrics metrics;
  private final Client client;
  private final KV kv;
  private final long timeoutMillis;

  public EtcdKvStore(KvConfig config, KvMetrics metrics) {
    this.config = config;
    this.metrics = metrics;
    this.timeoutMillis = config.dialTimeout().toMillis();
    ClientBuilder b = Client.builder()
        .endpoints(EtcdEndpoints.normalize(config.etcdEndpoints(), config.tlsEnabled()).toArray(String[]::new))
        .connectTimeout(config.dialTimeout())
        .retryMaxDuration(config.dialTimeout())
        .waitForReady(false);
    if (!config.username().isEmpty()) {
      b.user(bytes(config.username())).password(bytes(config.password()));
    }
    if (config.tlsEnabled()) {
      try {
        b.sslContext(ssl -> {
          if (config.tlsInsecureSkipVerify()) {
            ssl.trustManager(InsecureTrustManagerFactory.INSTANCE);
          } else if (!config.tlsCaPath().isEmpty()) {
            ssl.trustManager(new File(config.tlsCaPath()));
          }
          if (!config.tlsCertPath().isEmpty()) {
            ssl.keyManager(new File(config.tlsCertPath()), new File(config.tlsKeyPath()));
          }
        });
      } catch (SSLException e) {
        throw new KvException("cannot set up TLS to etcd: " + e.getMessage(), e);
      }
    }
    client = b.build();
    kv = client.getKVClient();
  }

  private static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }

  @Override
  public String fullKey(String key) {
    return config.prefix() + key;
  }

  private <T> T await(java.util.concurrent.CompletableFuture<T> f, String op, String key) {
    try {
      T t = f.get(timeoutMillis, TimeUnit.MILLISECONDS);
      metrics.request(op, true);
      return t;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      metrics.request(op, false);
      throw new KvException("interrupted during etcd " + op + " of " + key, e);
    } catch (ExecutionException | TimeoutException e) {
      metrics.request(op, false);
      f.cancel(true);
      Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
      throw new KvException("etcd " + op + " of " + fullKey(key) + " at " + config.etcdEndpoints() + " failed: " + cause,
          cause);
    }
  }

  @Override
  public byte @Nullable [] get(String key) {
    GetResponse r = await(kv.get(bytes(fullKey(key))), "get", key);
    return r.getKvs().isEmpty() ? null : r.getKvs().get(0).getValue().getBytes();
  }

  @Override
  public byte @Nullable [] cas(String key, UnaryOperator<byte @Nullable []> update) {
    ByteSequence k = bytes(fullKey(key));
    for (int attempt = 1; attempt <= config.maxRetries(); attempt++) {
      GetResponse r = await(kv.get(k), "get", key);
      KeyValue cur = r.getKvs().isEmpty() ? null : r.getKvs().get(0);
      byte[] current = cur == null ? null : cur.getValue().getBytes();
      byte[] next = update.apply(current == null ? null : current.clone());
      if (next == null || (current != null && Arrays.equals(current, next))) {
        return current;
      }
      Cmp cmp = cur == null
          ? new Cmp(k, Cmp.Op.EQUAL, CmpTarget.version(0))
          : new Cmp(k, Cmp.Op.EQUAL, CmpTarget.modRevision(cur.getModRevision()));
      TxnResponse t = await(kv.txn().If(cmp).Then(Op.put(k, ByteSequence.from(next), PutOption.DEFAULT)).commit(),
          "cas", key);
      if (t.isSucceeded()) {
        return next;
      }
      metrics.casConflicts.increment();
      try {
        // Exponential backoff with full jitter: concurrent writers spread out instead of colliding
        // again in lockstep.
        long cap = Math.min(1_000, 5L << Math.min(attempt, 10));
        Thread.sleep(ThreadLocalRandom.current().nextLong(1, cap + 1));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new KvException("interrupted during CAS retry of " + key, e);
      }
    }
    throw new KvException("CAS of " + fullKey(key) + " lost to concurrent writers " + config.maxRetries()
        + " times in a row");
  }

  @Override
  public void delete(String key) {
    await(kv.delete(bytes(fullKey(key))), "delete", key);
  }

  @Override
  public Watch watch(String key, WatchListener listener) {
    EtcdWatch w = new EtcdWatch(key, listener);
    w.thread.start();
    return w;
  }

  private final class EtcdWatch implements Watch {
    private final String key;
    private final WatchListener listener;
    private final Thread thread;
    private volatile boolean closed;
    private byte @Nullable [] last;
    private boolean delivered;

    EtcdWatch(String key, WatchListener listener) {
      this.key = key;
      this.listener = listener;
      this.thread = new Thread(this::run, "kv-etcd-watch-" + key);
      thread.setDaemon(true);
    }

    private void deliver(byte @Nullable [] v, boolean onlyIfChanged) {
      if (onlyIfChanged && delivered && Arrays.equals(last, v)) {
        return;
      }
      last = v;
      delivered = true;
      listener.onValue(v);
    }

    private void run() {
      long backoff = 100;
      boolean connected = false;
      while (!closed) {
        io.etcd.jetcd.Watch.Watcher watcher = null;
        try {
          ByteSequence k = bytes(fullKey(key));
          GetResponse r = await(kv.get(k), "get", key);
          deliver(r.getKvs().isEmpty() ? null : r.getKvs().get(0).getValue().getBytes(), true);
          if (!connected) {
            connected = true;
            listener.onConnection(true, null);
          }
          backoff = 100;
          BlockingQueue<Object> events = new LinkedBlockingQueue<>();
          watcher = client.getWatchClient().watch(k,
              WatchOption.builder().withRevision(r.getHeader().getRevision() + 1).build(),
              io.etcd.jetcd.Watch.listener(events::add, events::add, () -> events.add("completed")));
          while (!closed) {
            Object e = events.poll(QUIET_CHECK_MILLIS, TimeUnit.MILLISECONDS);
            if (e == null) {
              await(kv.get(k), "get", key); // still reachable? throws when not
            } else if (e instanceof WatchResponse resp) {
              for (WatchEvent ev : resp.getEvents()) {
                deliver(ev.getEventType() == WatchEvent.EventType.DELETE ? null
                    : ev.getKeyValue().getValue().getBytes(), false);
              }
            } else if (e instanceof Throwable t) {
              throw new KvException("watch of " + fullKey(key) + " failed: " + t, t);
            } else {
              throw new KvException("watch of " + fullKey(key) + " ended");
            }
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        } catch (RuntimeException e) {
          if (closed) {
            return;
          }
          if (connected) {
            connected = false;
            log.warn("msg=\"lost etcd watch, serving the last known value while reconnecting\" key={} err=\"{}\"",
                fullKey(key), String.valueOf(e.getMessage()).replace('"', '\''));
            listener.onConnection(false, String.valueOf(e.getMessage()));
          }
          try {
            Thread.sleep(backoff);
          } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
            return;
          }
          backoff = Math.min(MAX_BACKOFF_MILLIS, backoff * 2);
        } finally {
          if (watcher != null) {
            watcher.close();
          }
        }
      }
    }

    @Override
    public void close() {
      closed = true;
      thread.interrupt();
      try {
        thread.join(5_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  @Override
  public void close() {
    client.close();
  }
}
