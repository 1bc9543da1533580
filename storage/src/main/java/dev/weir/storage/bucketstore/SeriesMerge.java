package dev.weir.storage.bucketstore;

import dev.weir.storage.tsdb.head.ChunkData;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.labels.Labels;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Merges the series of several blocks into one list in label order: a series found in several
 * blocks becomes one series whose chunks are ordered by start time (blocks in the order given
 * break ties). Overlapping chunks are resolved when samples are decoded
 * ({@link SeriesChunks#samples}): one sample per timestamp, so identical samples of two blocks
 * appear once. Stateless.
 */
final class SeriesMerge {
  private SeriesMerge() {}

  static List<SeriesChunks> merge(List<List<SeriesChunks>> perBlock) {
    if (perBlock.size() == 1) {
      return perBlock.get(0);
    }
    TreeMap<Labels, List<ChunkData>> merged = new TreeMap<>();
    for (List<SeriesChunks> block : perBlock) {
      for (SeriesChunks s : block) {
        merged.computeIfAbsent(s.labels(), k -> new ArrayList<>()).addAll(s.chunks());
      }
    }
    List<SeriesChunks> out = new ArrayList<>(merged.size());
    for (Map.Entry<Labels, List<ChunkData>> e : merged.entrySet()) {
      List<ChunkData> chunks = e.getValue();
      chunks.sort(Comparator.comparingLong(ChunkData::minTime)); // stable: earlier blocks first on ties
      out.add(new SeriesChunks(e.getKey(), chunks));
    }
    return out;
  }
}
