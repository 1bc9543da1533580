package dev.weir.deploy;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.openshift.api.model.monitoring.v1.ServiceMonitor;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * Rendered manifests checked against the Kubernetes API types: each document is bound to the
 * fabric8 model of its apiVersion and kind (generated from the Kubernetes OpenAPI schema) with
 * scalar coercion off, and any field the type does not define — which the models keep aside as
 * "additional properties" — is an error naming its path, as the API server's strict field
 * validation would report it.
 */
final class KubernetesObjects {
  private static final ObjectMapper JSON = JsonMapper.builder()
      .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
      .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
      .build();
  private static final Map<String, Class<? extends HasMetadata>> TYPES = Map.of(
      "v1/ConfigMap", ConfigMap.class,
      "v1/Service", Service.class,
      "apps/v1/StatefulSet", StatefulSet.class,
      "apps/v1/Deployment", Deployment.class,
      "policy/v1/PodDisruptionBudget", PodDisruptionBudget.class,
      "monitoring.coreos.com/v1/ServiceMonitor", ServiceMonitor.class);

  private KubernetesObjects() {}

  /** The YAML documents of {@code helm template} output, as plain maps. */
  @SuppressWarnings("unchecked")
  static List<Map<String, Object>> documents(String yaml) {
    List<Map<String, Object>> out = new ArrayList<>();
    for (Object o : new Yaml(new SafeConstructor(new LoaderOptions())).loadAll(yaml)) {
      if (o != null) {
        out.add((Map<String, Object>) o);
      }
    }
    return out;
  }

  /** Binds a document to its API type; throws naming every problem. */
  static HasMetadata bind(Map<String, Object> doc) {
    String key = doc.get("apiVersion") + "/" + doc.get("kind");
    Class<? extends HasMetadata> type = TYPES.get(key);
    if (type == null) {
      throw new AssertionError("unexpected API type " + key);
    }
    JsonNode tree = JSON.valueToTree(doc);
    HasMetadata obj;
    try {
      obj = JSON.treeToValue(tree, type);
    } catch (Exception e) {
      throw new AssertionError(key + " " + name(doc) + " does not match the API schema: " + e.getMessage(), e);
    }
    List<String> unknown = new ArrayList<>();
    walk(obj, key + " " + name(doc), unknown, new IdentityHashMap<>());
    if (!unknown.isEmpty()) {
      throw new AssertionError("fields the Kubernetes API does not define: " + unknown);
    }
    return obj;
  }

  @SuppressWarnings("unchecked")
  private static String name(Map<String, Object> doc) {
    Object md = doc.get("metadata");
    return md instanceof Map<?, ?> m ? String.valueOf(((Map<String, Object>) m).get("name")) : "?";
  }

  private static void walk(Object o, String path, List<String> unknown, IdentityHashMap<Object, Boolean> seen) {
    if (o == null || seen.put(o, Boolean.TRUE) != null) {
      return;
    }
    if (o instanceof Collection<?> c) {
      int i = 0;
      for (Object x : c) {
        walk(x, path + "[" + i++ + "]", unknown, seen);
      }
      return;
    }
    if (o instanceof Map<?, ?> m) {
      for (Map.Entry<?, ?> e : m.entrySet()) {
        walk(e.getValue(), path + "." + e.getKey(), unknown, seen);
      }
      return;
    }
    if (!o.getClass().getName().startsWith("io.fabric8.")) {
      return;
    }
    for (Method g : o.getClass().getMethods()) {
      if (g.getParameterCount() != 0 || !g.getName().startsWith("get") || Modifier.isStatic(g.getModifiers())
          || g.getDeclaringClass() == Object.class) {
        continue;
      }
      Object v;
      try {
        v = g.invoke(o);
      } catch (ReflectiveOperationException e) {
        continue;
      }
      if (g.getName().equals("getAdditionalProperties")) {
        if (v instanceof Map<?, ?> extra && !extra.isEmpty()) {
          unknown.add(path + ": " + extra.keySet());
        }
        continue;
      }
      String field = Character.toLowerCase(g.getName().charAt(3)) + g.getName().substring(4);
      walk(v, path + "." + field, unknown, seen);
    }
  }
}
