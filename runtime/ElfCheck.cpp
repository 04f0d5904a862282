//===- ElfCheck.cpp - reject truncated or foreign shared objects ----------===//
//
// dlopen maps segments with mmap; a truncated file may still "load" and then
// fault (SIGBUS) on first access, and a file cut in its section tables loads
// silently. Checking the ELF headers against the file size first turns both
// into a clear error.
//
//===----------------------------------------------------------------------===//
#include "Module.h"
#include "nncc/plan_hash.h"

#include <cerrno>
#include <cstring>
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace nncc::rt {

namespace {

#if defined(__LP64__)
using Ehdr = Elf64_Ehdr;
using Phdr = Elf64_Phdr;
constexpr unsigned char kClass = ELFCLASS64;
#else
using Ehdr = Elf32_Ehdr;
using Phdr = Elf32_Phdr;
constexpr unsigned char kClass = ELFCLASS32;
#endif

#if defined(__x86_64__)
constexpr int kMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr int kMachine = EM_AARCH64;
#elif defined(__powerpc64__)
constexpr int kMachine = EM_PPC64;
#else
constexpr int kMachine = -1; // not checked
#endif

bool readAt(int fd, uint64_t offset, void *out, size_t bytes) {
  size_t done = 0;
  while (done < bytes) {
    ssize_t n = pread(fd, static_cast<char *>(out) + done, bytes - done,
                      static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

bool fits(uint64_t offset, uint64_t bytes, uint64_t size) {
  return offset <= size && bytes <= size - offset;
}

/// The whole file against the trailer nncc appended (include/nncc/plan_hash.h).
Status checkFileTrailer(int fd, uint64_t size) {
  const char *untagged = "truncated or corrupt, or not an nncc module: the file does not end with "
                         "the integrity trailer nncc writes (strip and similar tools drop it)";
  if (size < sizeof(Ehdr) + kFileTrailerBytes)
    return error(NNCC_ERROR_INVALID_MODULE, untagged);
  void *map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (map == MAP_FAILED)
    return error(NNCC_ERROR_INVALID_MODULE, std::string("cannot map the file: ") + std::strerror(errno));
  const auto *bytes = static_cast<const uint8_t *>(map);
  size_t body = static_cast<size_t>(size - kFileTrailerBytes);
  bool tagged = std::memcmp(bytes + body, kFileTrailerMagic, sizeof(kFileTrailerMagic)) == 0;
  uint64_t recorded = 0;
  for (int i = 0; i < 8; ++i)
    recorded |= uint64_t(bytes[body + 8 + i]) << (8 * i);
  uint64_t sum = tagged ? fileChecksum(bytes, body) : 0;
  munmap(map, size);
  if (!tagged)
    return error(NNCC_ERROR_INVALID_MODULE, untagged);
  if (sum != recorded)
    return error(NNCC_ERROR_INVALID_MODULE,
                 format("the file is corrupt (checksum 0x%016llx, nncc recorded 0x%016llx): it "
                        "changed after nncc wrote it",
                        static_cast<unsigned long long>(sum),
                        static_cast<unsigned long long>(recorded)));
  return Status::ok();
}

} // namespace

Status checkElfFile(const std::string &path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return error(NNCC_ERROR_NOT_FOUND, std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  struct stat st;
  if (fstat(fd, &st) != 0)
    return error(NNCC_ERROR_INVALID_MODULE, std::strerror(errno));
  uint64_t size = static_cast<uint64_t>(st.st_size);
  auto corrupt = [&](const std::string &why) {
    return error(NNCC_ERROR_INVALID_MODULE,
                 "truncated or corrupt shared library (" + why + ", file has " +
                     std::to_string(size) + " bytes)");
  };

  Ehdr eh;
  if (size < sizeof(eh) || !readAt(fd, 0, &eh, sizeof(eh)))
    return corrupt("shorter than an ELF header");
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
    return error(NNCC_ERROR_INVALID_MODULE, "not an ELF shared library (bad magic)");
  if (eh.e_ident[EI_CLASS] != kClass)
    return error(NNCC_ERROR_INVALID_MODULE,
                 std::string("ELF class does not match this host (") +
                     (kClass == ELFCLASS64 ? "need 64-bit" : "need 32-bit") + ")");
  if (kMachine >= 0 && eh.e_machine != kMachine)
    return error(NNCC_ERROR_INVALID_MODULE,
                 "compiled for another CPU architecture (ELF machine " +
                     std::to_string(eh.e_machine) + ", this host is " + std::to_string(kMachine) +
                     ")");
  if (eh.e_type != ET_DYN)
    return error(NNCC_ERROR_INVALID_MODULE, "not a shared library (ELF type " +
                                                std::to_string(eh.e_type) + ")");
  if (eh.e_phnum == 0 || eh.e_phentsize != sizeof(Phdr) ||
      !fits(eh.e_phoff, uint64_t(eh.e_phnum) * sizeof(Phdr), size))
    return corrupt("program headers outside the file");
  if (eh.e_shoff != 0 && !fits(eh.e_shoff, uint64_t(eh.e_shnum) * eh.e_shentsize, size))
    return corrupt("section headers end at byte " +
                   std::to_string(eh.e_shoff + uint64_t(eh.e_shnum) * eh.e_shentsize));

  std::vector<Phdr> ph(eh.e_phnum);
  if (!readAt(fd, eh.e_phoff, ph.data(), ph.size() * sizeof(Phdr)))
    return corrupt("cannot read program headers");
  for (const Phdr &p : ph) {
    if (p.p_type == PT_LOAD && !fits(p.p_offset, p.p_filesz, size))
      return corrupt("a loadable segment ends at byte " + std::to_string(p.p_offset + p.p_filesz));
  }
  return checkFileTrailer(fd, size);
}

} // namespace nncc::rt
