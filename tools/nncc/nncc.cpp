/// nncc: the compiler driver. All logic lives in lib/Driver.
#include "lib/Driver/Driver.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;

static cl::opt<std::string> inputPath(cl::Positional, cl::desc("<model.onnx>"), cl::Required);
static cl::opt<std::string> outputPath("o", cl::desc("Output file ('-' for stdout)"),
                                       cl::value_desc("file"), cl::init("-"));
static cl::opt<nncc::EmitKind> emit("emit", cl::desc("Stop after this stage"),
                                    cl::values(clEnumValN(nncc::EmitKind::NN, "nn",
                                                          "the imported nn-dialect module")),
                                    cl::init(nncc::EmitKind::NN));
static cl::list<std::string> shapes("shape",
                                    cl::desc("Fix the dims of a graph input: NAME:1x3x224x224"),
                                    cl::value_desc("NAME:DIMS"));
static cl::opt<bool> noSimplify("no-simplify",
                                cl::desc("Print the importer's output before canonicalization"));

static int fail(llvm::Error err) {
  llvm::errs() << "nncc: error: " << llvm::toString(std::move(err)) << "\n";
  return 1;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "nncc: ONNX graph compiler\n");

  nncc::CompileOptions options;
  options.emit = emit;
  options.noSimplify = noSimplify;
  for (const auto &shape : shapes)
    if (auto err = nncc::parseShapeOption(shape, options.import))
      return fail(std::move(err));

  mlir::MLIRContext context;
  context.printOpOnDiagnostic(false);
  auto module = nncc::compileOnnxFile(context, inputPath, options);
  if (!module)
    return fail(module.takeError());

  std::error_code ec;
  llvm::ToolOutputFile out(outputPath, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return fail(llvm::createStringError(ec, "cannot write '%s': %s", outputPath.c_str(),
                                        ec.message().c_str()));
  (*module)->print(out.os());
  out.os() << "\n";
  out.keep();
  return 0;
}
