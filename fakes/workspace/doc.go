// Package fakes is an in-memory world implementing every port of
// contracts/ports: the workspace store with leader sessions and its change
// feed, container instances, volumes with their archive job, the object
// store and the bus. It is what the simulator runs coordinators against.
//
// A World is driven by a virtual Clock and records into a history.Recorder:
//   - every store Insert and Update attempt (UpdateMany: one per row), applied
//     or not, fenced or not, as history.KindInsert / KindWrite with the
//     writer's component, instance and epoch, a copy of the patch, the
//     condition, Applied and Err;
//   - every leadership change as KindLeader ("acquire", "release", "lost");
//   - as KindCall (Method "port.Method", Args, Result, Err): every
//     instances, storage and objects call, Listen, and the bus's Publish,
//     Subscribe, Incr, Decr, Set, SetNX and Del.
//
// Calls a coordinator makes on every tick that change nothing (store Get and
// List, bus Get, listener and subscription Poll, lease Check, a TryAcquire
// that finds the lock taken) are only counted (World.Stats), unless they
// fail.
//
// World.Deps hands out per-instance views of the ports: calls through them
// are attributed to the instance and pass through the world's Hook first,
// which lets a harness fail any call (a crash, an outage) or observe it. A
// call the hook fails is recorded with its error and has no effect. Calls
// made on the world's ports directly behave the same with instance "".
//
// Methods documented as world methods (Kill, Lose, Corrupt, FlushAll,
// KillSession, DropFeed…) are the harness's levers on reality: they are
// not hooked, and not recorded (the harness records its faults itself)
// except for the leadership change a KillSession causes.
//
// Everything is safe for concurrent use (one mutex per world), and nothing
// depends on map iteration order or the wall clock, so a run is a pure
// function of its inputs.
package workspace
