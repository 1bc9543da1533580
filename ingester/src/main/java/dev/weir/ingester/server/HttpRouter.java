package dev.weir.ingester.server;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Routes requests by method and path. A path pattern is literal segments and {@code {param}}
 * segments, e.g. {@code /api/v1/label/{name}/values}; the first matching route wins. Each route has
 * a name for the request metrics (like Mimir's {@code api_v1_push}).
 *
 * <p>Routes are added before the server starts; lookups are then thread-safe.
 */
public final class HttpRouter {
  /** A registered route. */
  public record Route(String name, Set<String> methods, String[] segments, HttpHandler handler) {}

  /** A matched route with the values of its {@code {param}} segments, in order. */
  public record Match(Route route, List<String> params) {}

  private final List<Route> routes = new ArrayList<>();

  public HttpRouter add(String name, Set<String> methods, String pattern, HttpHandler handler) {
    routes.add(new Route(name, Set.copyOf(methods), split(pattern), handler));
    return this;
  }

  public HttpRouter get(String name, String pattern, HttpHandler handler) {
    return add(name, Set.of("GET"), pattern, handler);
  }

  /** The route for a path; {@code methodAllowed} tells 404 from 405 when the result is null. */
  public @Nullable Match match(String method, String path, boolean[] pathKnown) {
    String[] parts = split(path);
    for (Route r : routes) {
      List<String> params = matchPath(r.segments(), parts);
      if (params == null) {
        continue;
      }
      pathKnown[0] = true;
      if (r.methods().contains(method)) {
        return new Match(r, params);
      }
    }
    return null;
  }

  /** The names and patterns of all routes, for the index page. */
  public List<String> describe() {
    List<String> out = new ArrayList<>();
    for (Route r : routes) {
      out.add(String.join(",", new java.util.TreeSet<>(r.methods())) + " /" + String.join("/", r.segments()));
    }
    return out;
  }

  private static @Nullable List<String> matchPath(String[] pattern, String[] parts) {
    if (pattern.length != parts.length) {
      return null;
    }
    List<String> params = new ArrayList<>(0);
    for (int i = 0; i < pattern.length; i++) {
      String p = pattern[i];
      if (p.startsWith("{") && p.endsWith("}")) {
        params.add(parts[i]);
      } else if (!p.equals(parts[i])) {
        return null;
      }
    }
    return params;
  }

  private static String[] split(String path) {
    String p = path;
    while (p.startsWith("/")) {
      p = p.substring(1);
    }
    while (p.endsWith("/")) {
      p = p.substring(0, p.length() - 1);
    }
    return p.isEmpty() ? new String[0] : p.split("/");
  }
}
