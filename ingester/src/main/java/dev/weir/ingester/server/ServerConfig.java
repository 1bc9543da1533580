package dev.weir.ingester.server;

import dev.weir.ingester.config.ConfigException;
import dev.weir.ingester.config.Flag;
import dev.weir.ingester.config.FlagSet;
import java.time.Duration;

/**
 * Listen addresses and limits of the HTTP and gRPC servers.
 *
 * @param httpListenAddress address to bind, empty for all interfaces
 * @param httpListenPort HTTP port; 0 picks a free port (tests)
 * @param grpcListenAddress address to bind, empty for all interfaces
 * @param grpcListenPort gRPC port; 0 picks a free port (tests)
 * @param gracefulShutdownTimeout time in-flight requests get to finish on shutdown
 * @param grpcMaxRecvMsgSizeBytes largest gRPC message accepted
 * @param httpMaxRequestBodyBytes largest HTTP request body accepted (413 above)
 * @param httpReadTimeout time a client has to send a whole request, from its first byte
 * @param httpIdleTimeout time a keep-alive connection may wait for its next request
 * @param httpConnLimit most HTTP connections open at once (more are closed when accepted); 0 = no limit
 * @param grpcConnLimit most gRPC connections open at once (more are closed when accepted); 0 = no limit
 * @param grpcMaxConcurrentStreams most concurrent calls on one gRPC connection (HTTP/2 streams)
 */
public record ServerConfig(
    String httpListenAddress,
    int httpListenPort,
    String grpcListenAddress,
    int grpcListenPort,
    Duration gracefulShutdownTimeout,
    int grpcMaxRecvMsgSizeBytes,
    int httpMaxRequestBodyBytes,
    Duration httpReadTimeout,
    Duration httpIdleTimeout,
    int httpConnLimit,
    int grpcConnLimit,
    int grpcMaxConcurrentStreams) {

  public void validate() throws ConfigException {
    checkPort("server.http-listen-port", httpListenPort);
    checkPort("server.grpc-listen-port", grpcListenPort);
    if (httpListenPort != 0 && httpListenPort == grpcListenPort
        && httpListenAddress.equals(grpcListenAddress)) {
      throw new ConfigException("server.http-listen-port and server.grpc-listen-port must differ: "
          + httpListenPort);
    }
    if (grpcMaxRecvMsgSizeBytes <= 0) {
      throw new ConfigException("server.grpc-max-recv-msg-size-bytes must be positive");
    }
    if (httpMaxRequestBodyBytes <= 0) {
      throw new ConfigException("server.http-max-request-body-bytes must be positive");
    }
    if (httpReadTimeout.toMillis() < 1 || httpIdleTimeout.toMillis() < 1) {
      throw new ConfigException("server.http-read-timeout and server.http-idle-timeout must be positive");
    }
    if (httpConnLimit < 0 || grpcConnLimit < 0) {
      throw new ConfigException("server.http-conn-limit and server.grpc-conn-limit must not be negative (0: no limit)");
    }
    if (grpcMaxConcurrentStreams < 1) {
      throw new ConfigException("server.grpc-max-concurrent-streams must be positive");
    }
  }

  private static void checkPort(String key, int port) throws ConfigException {
    if (port < 0 || port > 65535) {
      throw new ConfigException(key + " must be in [0, 65535]: " + port);
    }
  }

  /** Flag definitions for {@link ServerConfig}. */
  public static final class Flags {
    private final Flag<String> httpAddress;
    private final Flag<Integer> httpPort;
    private final Flag<String> grpcAddress;
    private final Flag<Integer> grpcPort;
    private final Flag<Duration> shutdown;
    private final Flag<Integer> grpcMaxRecv;
    private final Flag<Integer> httpMaxBody;
    private final Flag<Duration> httpReadTimeout;
    private final Flag<Duration> httpIdleTimeout;
    private final Flag<Integer> httpConnLimit;
    private final Flag<Integer> grpcConnLimit;
    private final Flag<Integer> grpcStreams;

    public Flags(FlagSet fs) {
      httpAddress = fs.string("server.http-listen-address", "",
          "HTTP server listen address; empty listens on all interfaces.");
      httpPort = fs.integer("server.http-listen-port", 8080, "HTTP server listen port.");
      grpcAddress = fs.string("server.grpc-listen-address", "",
          "gRPC server listen address; empty listens on all interfaces.");
      grpcPort = fs.integer("server.grpc-listen-port", 9095, "gRPC server listen port.");
      shutdown = fs.duration("server.graceful-shutdown-timeout", Duration.ofSeconds(30),
          "Timeout for graceful shutdown of the servers: in-flight requests may finish.");
      grpcMaxRecv = fs.integer("server.grpc-max-recv-msg-size-bytes", 100 << 20,
          "Limit on the size of a gRPC message this server can receive (bytes); gRPC refuses a larger one"
              + " with RESOURCE_EXHAUSTED before reading it.");
      httpMaxBody = fs.integer("server.http-max-request-body-bytes", 100 << 20,
          "Limit on the size of an HTTP request body (bytes); larger requests get 413.");
      httpReadTimeout = fs.duration("server.http-read-timeout", Duration.ofSeconds(30),
          "Time a client has to send a whole HTTP request, headers and body, from its first byte; a slower"
              + " one (slowloris) has its connection closed.");
      httpIdleTimeout = fs.duration("server.http-idle-timeout", Duration.ofMinutes(2),
          "Time a keep-alive HTTP connection may wait for its next request before it is closed.");
      httpConnLimit = fs.integer("server.http-conn-limit", 1000,
          "Most HTTP connections open at once; a connection accepted beyond it is closed at once. 0 means no"
              + " limit.");
      grpcConnLimit = fs.integer("server.grpc-conn-limit", 1000,
          "Most gRPC connections open at once; a connection accepted beyond it is closed at once. 0 means no"
              + " limit.");
      grpcStreams = fs.integer("server.grpc-max-concurrent-streams", 100,
          "Most concurrent gRPC calls (HTTP/2 streams) on one connection; the client queues the rest.");
    }

    public ServerConfig build() {
      return new ServerConfig(httpAddress.get(), httpPort.get(), grpcAddress.get(), grpcPort.get(),
          shutdown.get(), grpcMaxRecv.get(), httpMaxBody.get(), httpReadTimeout.get(), httpIdleTimeout.get(),
          httpConnLimit.get(), grpcConnLimit.get(), grpcStreams.get());
    }
  }
}
