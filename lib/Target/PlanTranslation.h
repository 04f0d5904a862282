#ifndef NNCC_LIB_TARGET_PLANTRANSLATION_H
#define NNCC_LIB_TARGET_PLANTRANSLATION_H

namespace nncc {

/// Registers `--nncc-plan-to-c`: the plan C source (plan.c) of an exec
/// module the plan pipeline annotated (buildPlan, then emitPlanSource), as
/// the compiler links it for a host-only module with embedded weights.
void registerPlanTranslation();

} // namespace nncc

#endif // NNCC_LIB_TARGET_PLANTRANSLATION_H
