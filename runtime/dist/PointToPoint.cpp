//===- PointToPoint.cpp ---------------------------------------------------===//
#include "PointToPoint.h"

#include <cstring>
#include <map>
#include <string>

namespace nncc::rt {

bool isPointToPoint(const nncc_step &st) {
  if (st.kind != NNCC_STEP_COLLECTIVE || st.num_iparams <= NNCC_COLLECTIVE_OP)
    return false;
  int64_t op = st.iparams[NNCC_COLLECTIVE_OP];
  return op == NNCC_COLLECTIVE_SEND || op == NNCC_COLLECTIVE_RECV;
}

std::vector<int32_t> pointToPointRuns(const nncc_entry &entry) {
  std::vector<int32_t> runs(static_cast<size_t>(entry.num_steps), -1);
  for (int32_t s = 0; s < entry.num_steps;) {
    if (!isPointToPoint(entry.steps[s])) {
      ++s;
      continue;
    }
    int64_t group = entry.steps[s].iparams[NNCC_COLLECTIVE_GROUP];
    int32_t end = s + 1;
    while (end < entry.num_steps && isPointToPoint(entry.steps[end]) &&
           entry.steps[end].iparams[NNCC_COLLECTIVE_GROUP] == group)
      runs[end++] = 0;
    runs[s] = end;
    s = end;
  }
  return runs;
}

namespace {

/// One ncclSend or ncclRecv: one buffer of a send/recv step.
struct Call {
  bool send;
  int32_t peer, step, group; // group: its NCCL group's index in its stage's sequence
  int64_t bytes;
  int32_t matchGroup = -1;   // the peer's call it pairs with: that one's group
};

/// One stage's variant of an entry, as it is played.
struct Stage {
  const nncc_entry *entry = nullptr;
  std::vector<Call> calls;
  std::vector<std::vector<size_t>> groups; // the calls of each NCCL group, in order
  size_t at = 0;                           // the group it is in (groups.size(): done)
};

std::string stepName(const nncc_entry &entry, int32_t s) {
  const char *name = entry.steps[s].name;
  return name ? format("step %d ('%s')", s, name) : format("step %d", s);
}

/// The calls of `entry`'s send/recv steps over the pipeline group, grouped
/// as the CUDA session issues them.
void collectCalls(const nncc_entry &entry, Stage *out) {
  out->entry = &entry;
  std::vector<int32_t> runs = pointToPointRuns(entry);
  for (int32_t s = 0; s < entry.num_steps; ++s) {
    const nncc_step &st = entry.steps[s];
    if (runs[s] < 0 || st.iparams[NNCC_COLLECTIVE_GROUP] != NNCC_GROUP_PIPELINE)
      continue;
    if (runs[s] > 0)
      out->groups.emplace_back();
    for (int32_t a = 0; a < st.num_args; ++a) {
      out->groups.back().push_back(out->calls.size());
      out->calls.push_back(Call{st.iparams[NNCC_COLLECTIVE_OP] == NNCC_COLLECTIVE_SEND,
                                static_cast<int32_t>(st.iparams[NNCC_COLLECTIVE_PEER]), s,
                                static_cast<int32_t>(out->groups.size() - 1), st.args[a].bytes});
    }
  }
}

/// Pairs the n-th send from p to q with q's n-th receive from p.
Status pairCalls(const std::string &where, std::vector<Stage> &stages) {
  int32_t P = static_cast<int32_t>(stages.size());
  for (int32_t p = 0; p < P; ++p)
    for (int32_t q = 0; q < P; ++q) {
      if (p == q)
        continue;
      std::vector<Call *> sends, recvs;
      for (Call &c : stages[p].calls)
        if (c.send && c.peer == q)
          sends.push_back(&c);
      for (Call &c : stages[q].calls)
        if (!c.send && c.peer == p)
          recvs.push_back(&c);
      if (sends.size() != recvs.size())
        return error(NNCC_ERROR_INVALID_MODULE,
                     where + format(": pipeline stage %d sends %zu buffers to stage %d, which receives %zu from it: "
                                    "sends and receives must pair up",
                                    p, sends.size(), q, recvs.size()));
      for (size_t n = 0; n < sends.size(); ++n) {
        if (sends[n]->bytes != recvs[n]->bytes)
          return error(NNCC_ERROR_INVALID_MODULE,
                       where + format(": stage %d's %s sends %lld bytes, but stage %d's %s, its receive, takes %lld",
                                      p, stepName(*stages[p].entry, sends[n]->step).c_str(),
                                      (long long)sends[n]->bytes, q,
                                      stepName(*stages[q].entry, recvs[n]->step).c_str(),
                                      (long long)recvs[n]->bytes));
        sends[n]->matchGroup = recvs[n]->group;
        recvs[n]->matchGroup = sends[n]->group;
      }
    }
  return Status::ok();
}

/// The first call of stage p's current group whose peer has not reached
/// the group of its match, or null: the group can end.
const Call *waitingCall(const std::vector<Stage> &stages, int32_t p) {
  const Stage &s = stages[p];
  for (size_t c : s.groups[s.at]) {
    const Call &call = s.calls[c];
    if (stages[call.peer].at < static_cast<size_t>(call.matchGroup))
      return &call;
  }
  return nullptr;
}

/// Runs every stage's groups, each as far as it can go: a group ends once
/// each of its calls' matches has started (its peer reached that group).
Status play(const std::string &where, std::vector<Stage> &stages) {
  int32_t P = static_cast<int32_t>(stages.size());
  for (bool moved = true; moved;) {
    moved = false;
    for (int32_t p = 0; p < P; ++p)
      while (stages[p].at < stages[p].groups.size() && !waitingCall(stages, p)) {
        ++stages[p].at;
        moved = true;
      }
  }
  std::string waits;
  for (int32_t p = 0; p < P; ++p) {
    if (stages[p].at == stages[p].groups.size())
      continue;
    const Call *call = waitingCall(stages, p);
    waits += format("%sstage %d waits in %s (a %s) for stage %d", waits.empty() ? "" : ", ", p,
                    stepName(*stages[p].entry, call->step).c_str(), call->send ? "send" : "receive", call->peer);
  }
  if (waits.empty())
    return Status::ok();
  return error(NNCC_ERROR_UNSUPPORTED,
               where + ": its sends and receives would wait for each other forever over NCCL, whose sends wait for "
                       "their receivers (consecutive send/recv steps run as one NCCL group): " +
                   waits + "; this plan runs on the CPU target over MPI");
}

} // namespace

Status checkPointToPointOrder(const nncc_module &m, const nncc_plan &plan, const std::string &device) {
  int32_t P = m.pipeline_parallel;
  if (P <= 1)
    return Status::ok();
  // Each entry's variant per stage, by name (the verifier checked that
  // every stage has one).
  std::map<std::string, std::vector<const nncc_entry *>> byName;
  for (int32_t e = 0; e < plan.num_entries; ++e) {
    const nncc_entry &entry = plan.entries[e];
    std::vector<const nncc_entry *> &variants = byName[entry.name];
    variants.resize(static_cast<size_t>(P), nullptr);
    if (entry.pipeline_stage >= 0 && entry.pipeline_stage < P)
      variants[entry.pipeline_stage] = &entry;
  }
  for (auto &[name, variants] : byName) {
    std::vector<Stage> stages(static_cast<size_t>(P));
    bool complete = true;
    for (int32_t p = 0; p < P; ++p) {
      if (!variants[p]) {
        complete = false;
        break;
      }
      collectCalls(*variants[p], &stages[p]);
    }
    if (!complete)
      continue;
    std::string where = format("%s: entry '%s'", device.c_str(), name.c_str());
    NNCC_RETURN_IF_ERROR(pairCalls(where, stages));
    NNCC_RETURN_IF_ERROR(play(where, stages));
  }
  return Status::ok();
}

} // namespace nncc::rt
