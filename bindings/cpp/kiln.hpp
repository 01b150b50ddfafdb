/*
 * kiln.hpp: a header-only C++ wrapper (C++17 or later) over the C API of
 * kiln (kiln/kiln.h) and its scripting API (kiln/kiln_script.h).
 *
 * Every handle of the C API has a class in namespace kiln that owns one
 * reference and drops it in its destructor: Runtime, Tensor, Module,
 * Optimizer, LrSchedule, Example, DataSource, Transform, Loader, Trainer,
 * Strategy and Script. Those whose C handle can be retained (Runtime,
 * Tensor, Module, Optimizer, Loader) are copyable, and copies share the
 * object; the others are move-only. A wrapper made from nullptr, or moved
 * from, holds nothing and tests false. Objects hold what they need (a
 * module its runtime, a loader its source), so wrappers may go in any order;
 * only a trainer's schedule and strategy, which the C API cannot retain,
 * must outlive it.
 *
 * A failing call throws kiln::Error, a std::runtime_error carrying the
 * kiln_status and the message of kiln_last_error(). Configurations are
 * braced lists of name/value pairs; trainer callbacks are std::function,
 * and an exception one throws reaches the caller of step() or run().
 *
 *   kiln::Runtime rt;  // plugins from the default search path
 *   kiln::DataSource data(rt, "tensors", {{"input", kiln::Tensor::from_data(rt, points, {n, 2})},
 *                                         {"target", kiln::Tensor::from_data(rt, labels, {n})}});
 *   kiln::LoaderOptions batches;
 *   batches.batch_size = 16;
 *   kiln::TrainerOptions o;
 *   o.model = kiln::Module::sequential(rt, {kiln::Module(rt, "Linear", {{"in_features", 2}, {"out_features", 16}}),
 *                                           kiln::Module(rt, "ReLU"),
 *                                           kiln::Module(rt, "Linear", {{"in_features", 16}, {"out_features", 2}})});
 *   o.optimizer = kiln::Optimizer(rt, "SGD", o.model.parameters(), {{"lr", 0.1}});
 *   o.train = kiln::Loader(data, batches);
 *   o.epochs = 5;
 *   o.on_step = [](const kiln::StepMetrics& m) { return m.loss < 0.01; };  // true: stop here
 *   kiln::Trainer trainer(rt, o);
 *   while (std::optional<kiln::StepMetrics> m = trainer.step()) std::printf("loss %.4f\n", m->loss);
 *   trainer.save("trainer.safetensors");
 *
 * Handles and the C API mix freely: get() gives a wrapper's C handle (it
 * stays the wrapper's), T::adopt(handle) takes over a reference the caller
 * holds, T::retain(handle) adds one, and kiln::check(status) throws for a
 * failed status of a direct C call.
 *
 * Link kiln::kiln (libkiln.so); kiln::Script also needs kiln::lua
 * (libkiln_lua.so). With CMake, the target kiln::cpp gives this header.
 */
#ifndef KILN_KILN_HPP
#define KILN_KILN_HPP

#include "kiln_cpp/attr.hpp"
#include "kiln_cpp/data.hpp"
#include "kiln_cpp/error.hpp"
#include "kiln_cpp/loader.hpp"
#include "kiln_cpp/module.hpp"
#include "kiln_cpp/op.hpp"
#include "kiln_cpp/optimizer.hpp"
#include "kiln_cpp/runtime.hpp"
#include "kiln_cpp/script.hpp"
#include "kiln_cpp/strategy.hpp"
#include "kiln_cpp/tensor.hpp"
#include "kiln_cpp/trainer.hpp"

#endif /* KILN_KILN_HPP */
