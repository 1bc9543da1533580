package dev.weir.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import com.marcnuri.helm.TemplateCommand;
import dev.weir.ingester.config.FlagSet;
import dev.weir.ingester.config.WeirConfig;
import dev.weir.ingester.push.Limits;
import dev.weir.ingester.push.Overrides;
import dev.weir.ring.partition.PartitionIds;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The Helm chart through Helm itself (helm-java embeds Helm 3): lint, template with the default
 * and the multi-zone values, every rendered object bound to its Kubernetes API type, the values
 * schema rejecting wrong values, pod names giving partitions 0..N-1 per zone, and the rendered
 * configuration accepted by Weir's own flag parser.
 */
class HelmChartTest {
  static final String MULTI_ZONE = "ci/multi-zone-values.yaml";
  @TempDir Path tmp;

  static String template(String valuesFile, Map<String, Object> sets) {
    TemplateCommand t = new Helm(Repo.chart()).template().withName("weir").withNamespace("metrics")
        .withKubeVersion("v1.31.0");
    if (valuesFile != null) {
      t = t.withValuesFile(Repo.chart().resolve(valuesFile));
    }
    for (Map.Entry<String, Object> e : sets.entrySet()) {
      t = t.set(e.getKey(), e.getValue());
    }
    return t.call();
  }

  static List<HasMetadata> objects(String valuesFile) {
    List<HasMetadata> out = new ArrayList<>();
    for (Map<String, Object> doc : KubernetesObjects.documents(template(valuesFile, Map.of()))) {
      out.add(KubernetesObjects.bind(doc));
    }
    return out;
  }

  static <T> List<T> ofType(List<HasMetadata> objects, Class<T> type) {
    return objects.stream().filter(type::isInstance).map(type::cast).toList();
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> yaml(Path file) throws Exception {
    return (Map<String, Object>) new Yaml(new SafeConstructor(new LoaderOptions())).load(Files.readString(file));
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> merge(Map<String, Object> base, Map<String, Object> over) {
    Map<String, Object> out = new LinkedHashMap<>(base);
    over.forEach((k, v) -> {
      if (v instanceof Map<?, ?> m && out.get(k) instanceof Map<?, ?> b) {
        out.put(k, merge((Map<String, Object>) b, (Map<String, Object>) m));
      } else {
        out.put(k, v);
      }
    });
    return out;
  }

  static void copyTree(Path from, Path to) throws Exception {
    try (var s = Files.walk(from)) {
      for (Path f : s.toList()) {
        Path d = to.resolve(from.relativize(f).toString());
        if (Files.isDirectory(f)) {
          Files.createDirectories(d);
        } else {
          Files.copy(f, d);
        }
      }
    }
  }

  @Test
  void lintIsCleanInStrictModeWithDefaultAndMultiZoneValues() throws Exception {
    LintResult lint = new Helm(Repo.chart()).lint().strict().call();
    assertThat(lint.isFailed()).as("%s", lint.getMessages()).isFalse();
    // helm lint -f: the same chart with the multi-zone values merged over the defaults.
    Path copy = tmp.resolve("weir");
    copyTree(Repo.chart(), copy);
    Map<String, Object> merged = merge(yaml(Repo.chart().resolve("values.yaml")),
        yaml(Repo.chart().resolve(MULTI_ZONE)));
    DumperOptions o = new DumperOptions();
    o.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
    Files.writeString(copy.resolve("values.yaml"), new Yaml(o).dump(merged));
    LintResult multi = new Helm(copy).lint().strict().call();
    assertThat(multi.isFailed()).as("%s", multi.getMessages()).isFalse();
  }

  @ParameterizedTest
  @ValueSource(strings = {"", MULTI_ZONE})
  void renderedObjectsMatchTheKubernetesApiAndHangTogether(String values) {
    List<HasMetadata> objects = objects(values.isEmpty() ? null : values);
    assertThat(objects).isNotEmpty();
    Set<String> configMaps = ofType(objects, ConfigMap.class).stream().map(c -> c.getMetadata().getName())
        .collect(Collectors.toSet());
    List<PodSpec> pods = new ArrayList<>();
    List<Map<String, String>> podLabels = new ArrayList<>();
    for (StatefulSet s : ofType(objects, StatefulSet.class)) {
      assertThat(s.getSpec().getSelector().getMatchLabels().entrySet())
          .isSubsetOf(s.getSpec().getTemplate().getMetadata().getLabels().entrySet());
      Set<String> volumes = new HashSet<>();
      s.getSpec().getVolumeClaimTemplates().forEach(c -> volumes.add(c.getMetadata().getName()));
      checkPod(s.getSpec().getTemplate().getSpec(), volumes, configMaps);
      pods.add(s.getSpec().getTemplate().getSpec());
      podLabels.add(s.getSpec().getTemplate().getMetadata().getLabels());
      if ("ingester".equals(s.getMetadata().getLabels().get("app.kubernetes.io/component"))) {
        // One StatefulSet per zone, each replacing one pod at a time: one ingester per zone at once.
        assertThat(s.getSpec().getUpdateStrategy().getType()).isEqualTo("RollingUpdate");
        assertThat(s.getSpec().getTemplate().getSpec().getTerminationGracePeriodSeconds()).isGreaterThanOrEqualTo(120);
      }
    }
    for (Deployment d : ofType(objects, Deployment.class)) {
      assertThat(d.getSpec().getSelector().getMatchLabels().entrySet())
          .isSubsetOf(d.getSpec().getTemplate().getMetadata().getLabels().entrySet());
      checkPod(d.getSpec().getTemplate().getSpec(), new HashSet<>(), configMaps);
      podLabels.add(d.getSpec().getTemplate().getMetadata().getLabels());
    }
    for (Service svc : ofType(objects, Service.class)) {
      Map<String, String> sel = svc.getSpec().getSelector();
      assertThat(podLabels).as("pods selected by service %s", svc.getMetadata().getName())
          .anyMatch(l -> l.entrySet().containsAll(sel.entrySet()));
    }
    for (PodDisruptionBudget pdb : ofType(objects, PodDisruptionBudget.class)) {
      assertThat(pdb.getSpec().getMaxUnavailable().getIntVal()).isEqualTo(1);
      Map<String, String> sel = pdb.getSpec().getSelector().getMatchLabels();
      assertThat(podLabels).anyMatch(l -> l.entrySet().containsAll(sel.entrySet()));
    }
  }

  /** What the API server or kubelet would refuse: mounts without volumes, missing ConfigMaps, probes. */
  static void checkPod(PodSpec pod, Set<String> claimVolumes, Set<String> configMaps) {
    Set<String> volumes = new HashSet<>(claimVolumes);
    for (Volume v : pod.getVolumes()) {
      assertThat(volumes.add(v.getName())).as("volume %s defined once", v.getName()).isTrue();
      if (v.getConfigMap() != null) {
        assertThat(configMaps).contains(v.getConfigMap().getName());
      }
    }
    for (Container c : pod.getContainers()) {
      for (VolumeMount m : c.getVolumeMounts()) {
        assertThat(volumes).as("volume of mount %s", m.getMountPath()).contains(m.getName());
      }
      assertThat(c.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/ready");
      assertThat(c.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/health");
      assertThat(c.getResources().getRequests()).containsKeys("cpu", "memory");
    }
    assertThat(pod.getTerminationGracePeriodSeconds()).isGreaterThanOrEqualTo(60);
  }

  @ParameterizedTest
  @ValueSource(strings = {"", MULTI_ZONE})
  void ingesterPodNamesGivePartitionsZeroToNMinusOneInEveryZone(String values) {
    List<HasMetadata> objects = objects(values.isEmpty() ? null : values);
    List<StatefulSet> ingesters = ofType(objects, StatefulSet.class).stream()
        .filter(s -> "ingester".equals(s.getMetadata().getLabels().get("app.kubernetes.io/component"))).toList();
    assertThat(ingesters).hasSize(values.isEmpty() ? 1 : 3);
    String config = ofType(objects, ConfigMap.class).stream().filter(c -> c.getMetadata().getName().endsWith("-config"))
        .findFirst().orElseThrow().getData().get("weir.yaml");
    Matcher m = Pattern.compile("auto-create-topic-default-partitions: (\\d+)").matcher(config);
    assertThat(m.find()).isTrue();
    int topicPartitions = Integer.parseInt(m.group(1));
    for (StatefulSet s : ingesters) {
      int n = s.getSpec().getReplicas();
      Container c = s.getSpec().getTemplate().getSpec().getContainers().get(0);
      assertThat(c.getArgs()).contains("--ingester.id=$(POD_NAME)");
      assertThat(c.getEnv()).anyMatch(e -> e.getName().equals("POD_NAME")
          && e.getValueFrom().getFieldRef().getFieldPath().equals("metadata.name"));
      // A StatefulSet names its pods <name>-0 .. <name>-(n-1).
      List<Integer> partitions = IntStream.range(0, n)
          .mapToObj(i -> PartitionIds.fromInstanceId(s.getMetadata().getName() + "-" + i)).toList();
      assertThat(partitions).isEqualTo(IntStream.range(0, n).boxed().toList());
      assertThat(topicPartitions).isGreaterThanOrEqualTo(n);
      assertThat(s.getMetadata().getName()).matches("weir-ingester-zone-[a-c]");
      var antiAffinity = s.getSpec().getTemplate().getSpec().getAffinity().getPodAntiAffinity();
      String zone = s.getSpec().getTemplate().getMetadata().getLabels().get("weir.dev/zone");
      if (values.isEmpty()) {
        assertThat(antiAffinity.getRequiredDuringSchedulingIgnoredDuringExecution()).isEmpty();
      } else {
        // Zone-aware: never on a node with another zone's ingester.
        assertThat(antiAffinity.getRequiredDuringSchedulingIgnoredDuringExecution()).singleElement().satisfies(t -> {
          assertThat(t.getTopologyKey()).isEqualTo("kubernetes.io/hostname");
          assertThat(t.getLabelSelector().getMatchLabels()).containsEntry("app.kubernetes.io/component", "ingester");
          assertThat(t.getLabelSelector().getMatchExpressions()).singleElement().satisfies(e -> {
            assertThat(e.getKey()).isEqualTo("weir.dev/zone");
            assertThat(e.getOperator()).isEqualTo("NotIn");
            assertThat(e.getValues()).containsExactly(zone);
          });
        });
      }
    }
  }

  /** The ingester containers' arguments and bucket mounts for these values. */
  static List<Container> ingesterContainers(String valuesFile, Map<String, Object> sets) {
    List<Container> out = new ArrayList<>();
    for (Map<String, Object> doc : KubernetesObjects.documents(template(valuesFile, sets))) {
      if (KubernetesObjects.bind(doc) instanceof StatefulSet s
          && "ingester".equals(s.getMetadata().getLabels().get("app.kubernetes.io/component"))) {
        PodSpec pod = s.getSpec().getTemplate().getSpec();
        Container c = pod.getContainers().get(0);
        boolean mounted = c.getVolumeMounts().stream().anyMatch(m -> m.getMountPath().equals("/bucket"));
        boolean bucketVolume = pod.getVolumes().stream().anyMatch(v -> v.getName().equals("bucket"));
        assertThat(mounted).as("bucket mounted exactly when the volume exists").isEqualTo(bucketVolume);
        out.add(c);
      }
    }
    assertThat(out).isNotEmpty();
    return out;
  }

  @Test
  void ingestersShipBlocksOnlyIntoABucketAndNeverNextToBlockBuilders() {
    Map<String, Object> bucket = Map.of("ingester.bucketVolume.persistentVolumeClaim.claimName", "weir-bucket");
    // Defaults: no bucket, no block-builders: nothing to ship to.
    assertThat(ingesterContainers(null, Map.of())).allSatisfy(c -> {
      assertThat(c.getArgs()).contains("--blocks-storage.tsdb.ship-interval=0");
      assertThat(c.getVolumeMounts()).noneMatch(m -> m.getName().equals("bucket"));
    });
    // A bucket and no block-builders: the ingesters own long-term blocks (Mimir's classic setup).
    assertThat(ingesterContainers(null, bucket)).allSatisfy(c -> {
      assertThat(c.getArgs()).contains("--blocks-storage.tsdb.ship-interval=1m", "--blocks-storage.filesystem.dir=/bucket")
          .doesNotContain("--blocks-storage.tsdb.ship-interval=0");
      assertThat(c.getVolumeMounts()).anyMatch(m -> m.getName().equals("bucket") && m.getMountPath().equals("/bucket"));
    });
    // Block-builders own long-term blocks: ingesters never ship, even with a bucket configured.
    assertThat(ingesterContainers(MULTI_ZONE, bucket)).hasSize(3).allSatisfy(c -> {
      assertThat(c.getArgs()).contains("--blocks-storage.tsdb.ship-interval=0");
      assertThat(c.getVolumeMounts()).noneMatch(m -> m.getName().equals("bucket"));
    });
  }

  @Test
  void aQuerierReadsEveryPartitionByDefaultAndTheConfiguredStoreGatewaysInsteadOfTheRing() {
    List<Deployment> queriers = ofType(objects(null), Deployment.class).stream()
        .filter(d -> "querier".equals(d.getMetadata().getLabels().get("app.kubernetes.io/component"))).toList();
    assertThat(queriers).hasSize(1);
    assertThat(queriers.get(0).getSpec().getTemplate().getSpec().getContainers().get(0).getArgs())
        .contains("--target=querier").noneMatch(a -> a.startsWith("--querier.store-gateway-addresses"));
    String withStores = template(null, Map.of("querier.storeGatewayAddresses[0]", "sg-0:9095",
        "querier.storeGatewayAddresses[1]", "sg-1:9095"));
    assertThat(withStores).contains("- --querier.store-gateway-addresses=sg-0:9095,sg-1:9095");
    // Addresses replace the store-gateway ring: the chart's own store-gateways then come first.
    assertThat(template(null, Map.of("storeGateway.enabled", true, "querier.storeGatewayAddresses[0]", "sg-0:9095")))
        .containsPattern("- --querier.store-gateway-addresses=weir-store-gateway\\.[a-z-]+\\.svc:9095,sg-0:9095");
    String off = template(null, Map.of("querier.enabled", false));
    assertThat(off).doesNotContain("app.kubernetes.io/component: querier");
  }

  static Container container(PodSpec pod) {
    return pod.getContainers().get(0);
  }

  static Volume volume(PodSpec pod, String name) {
    return pod.getVolumes().stream().filter(v -> v.getName().equals(name)).findFirst().orElseThrow();
  }

  static <T extends HasMetadata> T component(List<HasMetadata> objects, Class<T> type, String component) {
    List<T> found = ofType(objects, type).stream()
        .filter(o -> component.equals(o.getMetadata().getLabels().get("app.kubernetes.io/component"))).toList();
    assertThat(found).as("%s %s", type.getSimpleName(), component).hasSize(1);
    return found.get(0);
  }

  @Test
  void storeGatewaysAndTheCompactorShareTheOneBucketAndQueriersReadTheStoreGateways() {
    // The multi-zone example on a filesystem bucket (it uses S3 as shipped).
    List<HasMetadata> objects = new ArrayList<>();
    for (Map<String, Object> doc : KubernetesObjects.documents(template(MULTI_ZONE, Map.of(
        "blocksStorage.backend", "filesystem", "bucket.volume.persistentVolumeClaim.claimName", "weir-bucket")))) {
      objects.add(KubernetesObjects.bind(doc));
    }
    PodSpec sg = component(objects, StatefulSet.class, "store-gateway").getSpec().getTemplate().getSpec();
    assertThat(container(sg).getArgs()).contains("--target=store-gateway", "--blocks-storage.filesystem.dir=/bucket",
        "--blocks-storage.bucket-store.sync-dir=/data/tsdb-sync", "--blocks-storage.bucket-store.sync-interval=15m");
    assertThat(container(sg).getVolumeMounts()).anyMatch(m -> m.getName().equals("bucket")
        && m.getMountPath().equals("/bucket") && Boolean.TRUE.equals(m.getReadOnly()));
    assertThat(component(objects, StatefulSet.class, "store-gateway").getSpec().getVolumeClaimTemplates())
        .extracting(c -> c.getMetadata().getName()).containsExactly("data");
    Service grpc = ofType(objects, Service.class).stream()
        .filter(s -> s.getMetadata().getName().equals("weir-store-gateway")).findFirst().orElseThrow();
    assertThat(grpc.getSpec().getPorts()).anyMatch(p -> p.getPort() == 9095 && p.getTargetPort().getStrVal()
        .equals("grpc"));
    assertThat(container(sg).getPorts()).anyMatch(p -> p.getName().equals("grpc") && p.getContainerPort() == 9095);
    PodSpec querier = component(objects, Deployment.class, "querier").getSpec().getTemplate().getSpec();
    assertThat(container(querier).getArgs()).as("the querier finds the store-gateways in their ring")
        .noneMatch(a -> a.startsWith("--querier.store-gateway-addresses"));
    assertThat(container(sg).getArgs()).contains("--ingester.id=$(POD_NAME)", "--ingester.ring.instance-addr=$(POD_IP)");

    Deployment compactor = component(objects, Deployment.class, "compactor");
    assertThat(compactor.getSpec().getReplicas()).isOne();
    assertThat(compactor.getSpec().getStrategy().getType()).as("never two cleanup jobs").isEqualTo("Recreate");
    PodSpec compactorPod = compactor.getSpec().getTemplate().getSpec();
    assertThat(container(compactorPod).getArgs()).contains("--target=compactor",
        "--blocks-storage.filesystem.dir=/bucket", "--compactor.blocks-retention-period=1y",
        "--compactor.deletion-delay=12h");
    PodSpec builder = component(objects, StatefulSet.class, "block-builder").getSpec().getTemplate().getSpec();
    for (PodSpec pod : List.of(sg, compactorPod, builder)) {
      assertThat(volume(pod, "bucket").getPersistentVolumeClaim().getClaimName()).isEqualTo("weir-bucket");
    }
  }

  @Test
  void onS3EveryBucketReaderGetsTheCredentialsAndNoBucketVolumeIsNeededByTheBuilders() {
    List<HasMetadata> objects = objects(MULTI_ZONE);
    for (PodSpec pod : List.of(component(objects, StatefulSet.class, "store-gateway").getSpec().getTemplate().getSpec(),
        component(objects, Deployment.class, "compactor").getSpec().getTemplate().getSpec(),
        component(objects, StatefulSet.class, "block-builder").getSpec().getTemplate().getSpec())) {
      assertThat(container(pod).getEnv()).anyMatch(e -> e.getName().equals("AWS_ACCESS_KEY_ID")
          && e.getValueFrom().getSecretKeyRef().getName().equals("weir-s3-credentials"));
    }
  }

  @Test
  void storeGatewaysAndTheCompactorAreOffByDefault() {
    String rendered = template(null, Map.of());
    assertThat(rendered).doesNotContain("app.kubernetes.io/component: store-gateway")
        .doesNotContain("app.kubernetes.io/component: compactor");
    // bucket.volume alone makes the ingesters ship (no block-builders), like ingester.bucketVolume.
    assertThat(ingesterContainers(null, Map.of("bucket.volume.persistentVolumeClaim.claimName", "weir-bucket")))
        .allSatisfy(c -> assertThat(c.getArgs()).contains("--blocks-storage.tsdb.ship-interval=1m"));
    // Without any bucket volume a store-gateway still renders, on an emptyDir (for trying it out).
    List<HasMetadata> tryOut = new ArrayList<>();
    for (Map<String, Object> doc : KubernetesObjects.documents(template(null, Map.of("storeGateway.enabled", true)))) {
      tryOut.add(KubernetesObjects.bind(doc));
    }
    PodSpec sg = component(tryOut, StatefulSet.class, "store-gateway").getSpec().getTemplate().getSpec();
    assertThat(volume(sg, "bucket").getEmptyDir()).isNotNull();
  }

  /** The image ImageIT checks is the one the chart runs: weir:<project version>, its JVM options replaced or kept. */
  @Test
  void theDefaultImageIsTheProjectVersionAndJavaOptsReplaceTheImageDefaults() throws Exception {
    String version = System.getProperty("weir.version", "");
    assertThat(version).as("weir.version system property (deploy/pom.xml)").isNotEmpty();
    assertThat(yaml(Repo.chart().resolve("Chart.yaml")).get("appVersion")).isEqualTo(version);
    List<Container> containers = new ArrayList<>();
    for (HasMetadata o : objects(MULTI_ZONE)) {
      if (o instanceof StatefulSet s) {
        containers.addAll(s.getSpec().getTemplate().getSpec().getContainers());
      } else if (o instanceof Deployment d) {
        containers.addAll(d.getSpec().getTemplate().getSpec().getContainers());
      }
    }
    assertThat(containers).isNotEmpty().allSatisfy(c -> {
      assertThat(c.getImage()).isEqualTo("weir:" + version);
      assertThat(c.getEnv()).anySatisfy(e -> assertThat(e.getName()).isEqualTo("JDK_JAVA_OPTIONS"));
    });
    assertThat(ingesterContainers(null, Map.of("ingester.javaOpts", "")))
        .allSatisfy(c -> assertThat(c.getEnv()).noneSatisfy(e -> assertThat(e.getName()).isEqualTo("JDK_JAVA_OPTIONS")));
  }

  @Test
  void wrongValuesAreRejected() {
    Map<String, Object> wrong = new LinkedHashMap<>();
    wrong.put("ingester.replicas", 0);
    wrong.put("kafka.address", "no port here");
    wrong.put("kafka.sasl.mechanism", "KERBEROS");
    wrong.put("etcd.endpoints[0]", "etcd"); // no port
    wrong.put("etcd.endpoints[1]", "ftp://etcd:2379");
    wrong.put("ingester.zones[0].name", "Zone_A");
    wrong.put("blockBuilder.consumeInterval", "an hour");
    wrong.put("ingester.terminationGracePeriodSeconds", 5);
    wrong.put("ingester.shipInterval", "every minute");
    wrong.put("distributor.replica", 3);
    wrong.put("querier.storeGatewayAddresses[0]", "sg-0");
    wrong.put("runtimeOverrides.tenant-a.ingestion_rat", 5);
    wrong.put("runtimeOverrides.tenant-a.ingestion_partitions_tenant_shard_size", -1);
    wrong.put("blocksStorage.backend", "gcs");
    wrong.put("blocksStorage.s3.endpoint", "https://minio:9000");
    wrong.put("blocksStorage.s3.bucketLookupType", "dns");
    wrong.put("storeGateway.syncInterval", "often");
    wrong.put("storeGateway.replicas", 0);
    wrong.put("compactor.blocksRetentionPeriod", "forever");
    wrong.put("compactor.replicas", 2);
    wrong.put("bucket.volum", "x");
    for (Map.Entry<String, Object> e : wrong.entrySet()) {
      assertThatThrownBy(() -> template(null, Map.of(e.getKey(), e.getValue())))
          .as("%s=%s", e.getKey(), e.getValue())
          .hasMessageContaining("values don't meet the specifications of the schema");
    }
    assertThatThrownBy(() -> template(null, Map.of("ingester.replicas", 10)))
        .hasMessageContaining("kafka.autoCreateTopicPartitions (3) must be at least ingester.replicas (10)");
    assertThatThrownBy(() -> template(null, Map.of("blocksStorage.backend", "s3", "blocksStorage.s3.endpoint",
        "minio:9000"))).hasMessageContaining("blocksStorage.s3.endpoint and blocksStorage.s3.bucketName are required");
  }

  @Test
  void theS3BackendGivesTheBlockBuildersTheBucketAndTheSecretsKeysAsAwsVariables() {
    List<HasMetadata> objects = objects(MULTI_ZONE);
    StatefulSet builders = ofType(objects, StatefulSet.class).stream()
        .filter(s -> s.getMetadata().getName().equals("weir-block-builder")).findFirst().orElseThrow();
    PodSpec pod = builders.getSpec().getTemplate().getSpec();
    Container c = pod.getContainers().get(0);
    Map<String, String> secretRefs = new LinkedHashMap<>();
    c.getEnv().stream().filter(e -> e.getName().startsWith("AWS_")).forEach(e -> secretRefs.put(e.getName(),
        e.getValueFrom().getSecretKeyRef().getName() + "/" + e.getValueFrom().getSecretKeyRef().getKey()));
    assertThat(secretRefs).containsExactly(Map.entry("AWS_ACCESS_KEY_ID", "weir-s3-credentials/access-key-id"),
        Map.entry("AWS_SECRET_ACCESS_KEY", "weir-s3-credentials/secret-access-key"));
    assertThat(c.getArgs()).noneMatch(a -> a.contains("blocks-storage"));
    assertThat(pod.getVolumes()).noneMatch(v -> v.getName().equals("bucket"));
    String config = ofType(objects, ConfigMap.class).stream().map(m -> m.getData().get("weir.yaml"))
        .filter(java.util.Objects::nonNull).findFirst().orElseThrow();
    assertThat(config).contains("blocks-storage.backend: s3", "blocks-storage.s3.endpoint: \"s3.eu-west-1.amazonaws.com\"",
        "blocks-storage.s3.bucket-name: \"weir-blocks\"", "blocks-storage.s3.region: \"eu-west-1\"");
  }

  @ParameterizedTest
  @ValueSource(strings = {"etcd:2379", "http://etcd:2379", "https://etcd-0.etcd:2379"})
  void etcdEndpointsAreAcceptedAsHostPortOrUrl(String endpoint) throws Exception {
    String yaml = null;
    for (Map<String, Object> doc : KubernetesObjects.documents(template(null, Map.of("etcd.endpoints[0]", endpoint)))) {
      if (KubernetesObjects.bind(doc) instanceof ConfigMap cm && cm.getData().containsKey("weir.yaml")) {
        yaml = cm.getData().get("weir.yaml");
      }
    }
    assertThat(yaml).isNotNull();
    Path config = Files.writeString(tmp.resolve("weir.yaml"), yaml);
    WeirConfig parsed = new WeirConfig.Flags(new FlagSet()).load(new String[] {"--config.file=" + config});
    assertThat(parsed.ring().kv().etcdEndpoints()).containsExactly(endpoint);
  }

  @ParameterizedTest
  @ValueSource(strings = {"", MULTI_ZONE})
  void renderedConfigurationIsAcceptedByWeir(String values) throws Exception {
    List<HasMetadata> objects = objects(values.isEmpty() ? null : values);
    Map<String, String> files = new LinkedHashMap<>();
    for (ConfigMap cm : ofType(objects, ConfigMap.class)) {
      files.putAll(cm.getData());
    }
    Path config = Files.writeString(tmp.resolve("weir.yaml"), files.get("weir.yaml"));
    Path runtime = Files.writeString(tmp.resolve("runtime.yaml"), files.get("runtime.yaml"));
    List<Container> containers = new ArrayList<>();
    ofType(objects, StatefulSet.class).forEach(s -> containers.addAll(s.getSpec().getTemplate().getSpec()
        .getContainers()));
    ofType(objects, Deployment.class).forEach(d -> containers.addAll(d.getSpec().getTemplate().getSpec()
        .getContainers()));
    assertThat(containers).hasSizeGreaterThanOrEqualTo(2);
    for (Container c : containers) {
      List<String> args = new ArrayList<>();
      for (String a : c.getArgs()) {
        args.add(a.replace("/etc/weir/config/weir.yaml", config.toString())
            .replace("/etc/weir/runtime/runtime.yaml", runtime.toString())
            .replace("$(POD_NAME)", "weir-" + c.getName() + "-zone-a-2").replace("$(POD_IP)", "10.0.0.1")
            .replaceAll("\\$\\([A-Z_]+\\)", "from-secret"));
      }
      WeirConfig parsed = new WeirConfig.Flags(new FlagSet()).load(args.toArray(String[]::new));
      assertThat(parsed.target()).isEqualTo(c.getName());
      if (c.getName().equals("block-builder")) {
        // The multi-zone values build into S3: the bucket flags parse and validate.
        assertThat(parsed.bucket().s3()).isNotNull();
        assertThat(parsed.bucket().s3().endpointUrl()).isEqualTo("https://s3.eu-west-1.amazonaws.com");
        assertThat(parsed.bucket().s3().pathStyle()).isFalse();
      }
      assertThat(parsed.ingest().enabled()).isTrue();
      assertThat(parsed.ring().kv().store()).isEqualTo("etcd");
      assertThat(parsed.runtimeConfig().file()).isEqualTo(runtime);
      if (c.getName().equals("compactor")) {
        assertThat(parsed.limits().compactorBlocksRetentionPeriod()).isEqualTo(java.time.Duration.ofDays(365));
      }
      if (c.getName().equals("store-gateway")) {
        assertThat(parsed.bucketStore().syncDir()).isEqualTo(Path.of("/data/tsdb-sync"));
      }
      Overrides overrides = Overrides.load(runtime, Limits.DEFAULT);
      if (!values.isEmpty()) {
        assertThat(overrides.apply("tenant-a").ingestionPartitionsTenantShardSize()).isEqualTo(3);
      }
      if (c.getName().equals("distributor")) {
        assertThat(parsed.distributor().global()).as("distributors share the rate limit by default").isTrue();
      }
    }
  }

  @Test
  void theReadmeListsEveryValue() throws Exception {
    String readme = Files.readString(Repo.chart().resolve("README.md"));
    List<String> missing = new ArrayList<>();
    collectKeys("", yaml(Repo.chart().resolve("values.yaml")), missing, readme);
    assertThat(missing).as("values not in deploy/helm/weir/README.md").isEmpty();
  }

  @SuppressWarnings("unchecked")
  static void collectKeys(String prefix, Map<String, Object> map, List<String> missing, String readme) {
    for (Map.Entry<String, Object> e : map.entrySet()) {
      String key = prefix + e.getKey();
      boolean leafLike = !(e.getValue() instanceof Map<?, ?> m) || m.isEmpty() || key.equals("blockBuilder.bucketVolume")
          || key.endsWith(".resources") || key.equals("podSecurityContext");
      if (leafLike) {
        if (!readme.contains("`" + key + "`")) {
          missing.add(key);
        }
      } else {
        collectKeys(key + ".", (Map<String, Object>) e.getValue(), missing, readme);
      }
    }
  }
}
