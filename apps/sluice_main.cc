// sluice: tf.data-style input pipelines on oneTBB, and an estimator to train with them.
#include <cstdio>

#include "apps/commands.h"
#include "apps/time_zone.h"
#include "core/errors.h"

int main(int argc, char** argv) {
  sluice::app::pin_time_zone();
  CLI::App app{"sluice: composable input pipelines on oneTBB flow graphs"};
  app.require_subcommand(1);
  sluice::app::add_bench_command(app);
  sluice::app::add_records_command(app);
  sluice::app::add_archive_command(app);
  sluice::app::add_train_command(app);
  sluice::app::add_evaluate_command(app);
  sluice::app::add_predict_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const sluice::Error& e) {
    std::fprintf(stderr, "sluice: %s error: %s\n",
                 std::string(sluice::error_code_name(e.code())).c_str(), e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sluice: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
