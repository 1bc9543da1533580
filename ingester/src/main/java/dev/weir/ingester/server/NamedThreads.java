package dev.weir.ingester.server;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/** Thread factories that name threads {@code prefix-N} and mark them daemon. */
public final class NamedThreads {
  private NamedThreads() {}

  public static ThreadFactory factory(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }
}
