{{/* Name prefix of every object: the release name, plus "-weir" unless it already says weir. */}}
{{- define "weir.fullname" -}}
{{- if contains "weir" .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-weir" .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "weir.labels" -}}
app.kubernetes.io/name: weir
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "weir.selector" -}}
app.kubernetes.io/name: weir
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "weir.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* Arguments every component gets: config files and the Kafka and etcd secrets' flags. */}}
{{- define "weir.commonArgs" -}}
- --config.file=/etc/weir/config/weir.yaml
- --runtime-config.file=/etc/weir/runtime/runtime.yaml
- --ingester.ring.instance-addr=$(POD_IP)
{{- if .Values.kafka.sasl.mechanism }}
- --ingest-storage.kafka.sasl-username=$(KAFKA_SASL_USERNAME)
- --ingest-storage.kafka.sasl-password=$(KAFKA_SASL_PASSWORD)
{{- end }}
{{- if .Values.etcd.auth.secretName }}
- --ingester.ring.etcd.username=$(ETCD_USERNAME)
- --ingester.ring.etcd.password=$(ETCD_PASSWORD)
{{- end }}
{{- end -}}

{{- define "weir.commonEnv" -}}
- name: POD_NAME
  valueFrom: {fieldRef: {fieldPath: metadata.name}}
- name: POD_IP
  valueFrom: {fieldRef: {fieldPath: status.podIP}}
{{- if .Values.kafka.sasl.mechanism }}
- name: KAFKA_SASL_USERNAME
  valueFrom: {secretKeyRef: {name: {{ .Values.kafka.sasl.secretName }}, key: username}}
- name: KAFKA_SASL_PASSWORD
  valueFrom: {secretKeyRef: {name: {{ .Values.kafka.sasl.secretName }}, key: password}}
{{- end }}
{{- if .Values.etcd.auth.secretName }}
- name: ETCD_USERNAME
  valueFrom: {secretKeyRef: {name: {{ .Values.etcd.auth.secretName }}, key: username}}
- name: ETCD_PASSWORD
  valueFrom: {secretKeyRef: {name: {{ .Values.etcd.auth.secretName }}, key: password}}
{{- end }}
{{- end -}}

{{- define "weir.commonMounts" -}}
- name: config
  mountPath: /etc/weir/config
- name: runtime
  mountPath: /etc/weir/runtime
{{- if and .Values.kafka.tls.enabled .Values.kafka.tls.caSecretName }}
- name: kafka-ca
  mountPath: /etc/weir/kafka-ca
  readOnly: true
{{- end }}
{{- if and .Values.etcd.tls.enabled .Values.etcd.tls.secretName }}
- name: etcd-tls
  mountPath: /etc/weir/etcd-tls
  readOnly: true
{{- end }}
{{- end -}}

{{- define "weir.commonVolumes" -}}
- name: config
  configMap: {name: {{ include "weir.fullname" . }}-config}
- name: runtime
  configMap: {name: {{ include "weir.fullname" . }}-runtime}
{{- if and .Values.kafka.tls.enabled .Values.kafka.tls.caSecretName }}
- name: kafka-ca
  secret: {secretName: {{ .Values.kafka.tls.caSecretName }}}
{{- end }}
{{- if and .Values.etcd.tls.enabled .Values.etcd.tls.secretName }}
- name: etcd-tls
  secret: {secretName: {{ .Values.etcd.tls.secretName }}}
{{- end }}
{{- end -}}

{{/* Ports, probes and the image of a Weir container. */}}
{{- define "weir.containerBasics" -}}
image: {{ include "weir.image" . }}
imagePullPolicy: {{ .Values.image.pullPolicy }}
ports:
  - {name: http-metrics, containerPort: 8080, protocol: TCP}
  - {name: grpc, containerPort: 9095, protocol: TCP}
readinessProbe:
  httpGet: {path: /ready, port: http-metrics}
  periodSeconds: 5
  failureThreshold: 3
livenessProbe:
  httpGet: {path: /health, port: http-metrics}
  periodSeconds: 10
  failureThreshold: 6
securityContext:
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  capabilities: {drop: [ALL]}
{{- end -}}

{{/*
The volume source of the filesystem bucket for a component: bucket.volume, else the component's
own (older) bucketVolume value; empty when neither is set. Call with (dict "root" $ "own" <value>).
*/}}
{{- define "weir.bucketVolume" -}}
{{- $v := .root.Values.bucket.volume | default .own -}}
{{- if $v }}{{ toYaml $v }}{{ end -}}
{{- end -}}

{{/*
The S3 credentials from blocksStorage.s3.existingSecret as AWS_* variables (the AWS SDK reads
them itself, so the secret never appears in a process's arguments); nothing for a filesystem
bucket or without a secret (the pods' own AWS identity).
*/}}
{{- define "weir.s3Env" -}}
{{- $s3 := .Values.blocksStorage.s3 -}}
{{- if and (eq .Values.blocksStorage.backend "s3") $s3.existingSecret }}
- name: AWS_ACCESS_KEY_ID
  valueFrom: {secretKeyRef: {name: {{ $s3.existingSecret }}, key: {{ $s3.accessKeyIdKey }}}}
- name: AWS_SECRET_ACCESS_KEY
  valueFrom: {secretKeyRef: {name: {{ $s3.existingSecret }}, key: {{ $s3.secretAccessKeyKey }}}}
{{- end }}
{{- end }}
