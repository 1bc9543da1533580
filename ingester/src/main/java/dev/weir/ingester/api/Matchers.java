package dev.weir.ingester.api;

import dev.weir.proto.prompb.LabelMatcher;
import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.tsdb.labels.Matcher;
import java.util.ArrayList;
import java.util.List;

/** Converts label matchers from and to protobuf; an invalid regex or type is a client error. Stateless. */
public final class Matchers {
  private Matchers() {}

  public static List<Matcher> fromProto(List<LabelMatcher> in) {
    List<Matcher> out = new ArrayList<>(in.size());
    for (LabelMatcher m : in) {
      Matcher.Type type = switch (m.getType()) {
        case EQ -> Matcher.Type.EQ;
        case NEQ -> Matcher.Type.NEQ;
        case RE -> Matcher.Type.RE;
        case NRE -> Matcher.Type.NRE;
        default -> throw new ClientErrorException("bad_data", "unknown matcher type " + m.getTypeValue());
      };
      try {
        out.add(Matcher.of(type, m.getName(), m.getValue()));
      } catch (IllegalArgumentException e) {
        throw new ClientErrorException("bad_data", e.getMessage());
      }
    }
    return out;
  }

  /** The protobuf form of matchers, e.g. for a querier's calls to its sources. */
  public static List<LabelMatcher> toProto(List<Matcher> in) {
    List<LabelMatcher> out = new ArrayList<>(in.size());
    for (Matcher m : in) {
      LabelMatcher.Type type = switch (m.type()) {
        case EQ -> LabelMatcher.Type.EQ;
        case NEQ -> LabelMatcher.Type.NEQ;
        case RE -> LabelMatcher.Type.RE;
        case NRE -> LabelMatcher.Type.NRE;
      };
      out.add(LabelMatcher.newBuilder().setType(type).setName(m.name()).setValue(m.value()).build());
    }
    return out;
  }
}
