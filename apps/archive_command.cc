// `sluice archive extract|list`: safe extraction and listing of zip/tar archives (formats/archive.h
// holds the rules; this file only parses flags and prints).
#include <cstdio>
#include <memory>
#include <string>

#include "apps/commands.h"
#include "apps/report.h"
#include "formats/archive.h"

namespace sluice::app {

void add_archive_command(CLI::App& app) {
  auto* archive = app.add_subcommand("archive", "Extract or list zip and tar archives safely");
  archive->require_subcommand(1);
  struct Flags {
    std::string archive;
    std::string dir;
    int64_t max_bytes = ExtractOptions{}.max_total_bytes;
    double max_ratio = ExtractOptions{}.max_ratio;
    bool json = false;
  };
  auto flags = std::make_shared<Flags>();

  auto* extract = archive->add_subcommand(
      "extract",
      "Extract into DIR (new or empty), refusing '..', absolute paths, links out of DIR, device "
      "files and bombs; nothing is left behind on failure");
  extract->add_option("archive", flags->archive, "zip, tar or tar.gz file")->required();
  extract->add_option("dir", flags->dir, "Destination directory")->required();
  extract->add_option("--max-bytes", flags->max_bytes, "Limit on the bytes extracted")
      ->capture_default_str();
  extract->add_option("--max-ratio", flags->max_ratio,
                      "Limit on extracted bytes per archive byte")
      ->capture_default_str();
  extract->add_flag("--json", flags->json, "Print the last line as JSON");
  extract->callback([flags] {
    ExtractOptions options;
    options.max_total_bytes = flags->max_bytes;
    options.max_ratio = flags->max_ratio;
    const ExtractResult r = extract_archive(flags->archive, flags->dir, options);
    Report report;
    report.add("files", static_cast<long long>(r.files));
    report.add("bytes", static_cast<long long>(r.bytes));
    report.print(flags->json);
  });

  auto* list = archive->add_subcommand("list", "List members: size, type and path, one a line");
  list->add_option("archive", flags->archive, "zip, tar or tar.gz file")->required();
  list->add_flag("--json", flags->json, "Print the last line as JSON");
  list->callback([flags] {
    ArchiveReader reader(flags->archive);
    ArchiveEntry entry;
    long long files = 0, bytes = 0;
    while (reader.next(entry)) {
      const char* type = entry.type == ArchiveEntryType::kFile        ? "file"
                         : entry.type == ArchiveEntryType::kDirectory ? "dir"
                         : entry.type == ArchiveEntryType::kSymlink   ? "symlink"
                         : entry.type == ArchiveEntryType::kHardlink  ? "hardlink"
                                                                      : "other";
      std::printf("%12lld  %-8s %s%s%s\n", static_cast<long long>(entry.size), type,
                  entry.path.c_str(), entry.link_target.empty() ? "" : " -> ",
                  entry.link_target.c_str());
      if (entry.type != ArchiveEntryType::kDirectory) ++files;
      if (entry.size > 0) bytes += entry.size;
    }
    Report report;
    report.add("files", files);
    report.add("bytes", bytes);
    report.print(flags->json);
  });
}

}  // namespace sluice::app
