package dev.weir.ingester.server;

import io.netty.channel.Channel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A listening socket that closes a connection it accepts while {@code limit} connections are
 * already open, before any byte of it is read: the client sees the connection closed at once
 * (Mimir's listener instead leaves it waiting in the accept backlog), and the open connections
 * keep working. Used by the HTTP and the gRPC server.
 *
 * <p>Thread-safe: accepts happen on the listening channel's event loop, closes on any loop.
 */
final class ConnectionLimitedChannel extends NioServerSocketChannel {
  private static final Logger log = LoggerFactory.getLogger(ConnectionLimitedChannel.class);

  private final String server;
  private final int limit;
  private final AtomicInteger open = new AtomicInteger();
  private final Runnable onRefused;

  /**
   * @param server named in the log line
   * @param limit most connections open at once; 0 means unlimited
   * @param onRefused counts a refused connection
   */
  ConnectionLimitedChannel(String server, int limit, Runnable onRefused) {
    this.server = server;
    this.limit = limit;
    this.onRefused = onRefused;
  }

  @Override
  protected int doReadMessages(List<Object> buf) throws Exception {
    int first = buf.size();
    int accepted = super.doReadMessages(buf);
    for (int i = buf.size() - 1; i >= first; i--) {
      Channel child = (Channel) buf.get(i);
      if (limit > 0 && open.incrementAndGet() > limit) {
        open.decrementAndGet();
        buf.remove(i);
        accepted--;
        child.unsafe().closeForcibly();
        onRefused.run();
        log.debug("msg=\"connection refused: limit reached\" server={} limit={}", server, limit);
      } else if (limit > 0) {
        child.closeFuture().addListener(f -> open.decrementAndGet());
      }
    }
    return accepted;
  }
}
