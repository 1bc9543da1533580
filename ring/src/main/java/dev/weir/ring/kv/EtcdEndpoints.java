package dev.weir.ring.kv;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Normalizes etcd endpoints to the {@code scheme://host:port} URIs jetcd needs. Mimir (through
 * the Go etcd client) takes both {@code host:port} and {@code http(s)://host:port}; a bare
 * {@code host:port} gets {@code https://} when TLS is on, {@code http://} otherwise.
 *
 * <p>Stateless.
 */
public final class EtcdEndpoints {
  private EtcdEndpoints() {}

  /**
   * The endpoints as URIs jetcd accepts.
   *
   * @throws IllegalArgumentException naming the endpoint that is neither {@code host:port} nor
   *     {@code http(s)://host:port}
   */
  public static List<String> normalize(List<String> endpoints, boolean tls) {
    List<String> out = new ArrayList<>(endpoints.size());
    for (String e : endpoints) {
      out.add(normalize(e.trim(), tls));
    }
    return out;
  }

  private static String normalize(String endpoint, boolean tls) {
    String withScheme = endpoint.contains("://") ? endpoint : (tls ? "https://" : "http://") + endpoint;
    URI uri;
    try {
      uri = new URI(withScheme);
    } catch (URISyntaxException e) {
      throw invalid(endpoint, e.getMessage());
    }
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    if (!scheme.equals("http") && !scheme.equals("https")) {
      throw invalid(endpoint, "the scheme must be http or https");
    }
    if (uri.getHost() == null || uri.getPort() < 0) {
      throw invalid(endpoint, "it needs a host and a port");
    }
    String path = uri.getRawPath();
    if ((path != null && !path.isEmpty() && !path.equals("/")) || uri.getRawQuery() != null) {
      throw invalid(endpoint, "it must not have a path or query");
    }
    return scheme + "://" + uri.getRawAuthority();
  }

  private static IllegalArgumentException invalid(String endpoint, String why) {
    return new IllegalArgumentException("etcd endpoint \"" + endpoint + "\" is not host:port or"
        + " http(s)://host:port: " + why);
  }
}
