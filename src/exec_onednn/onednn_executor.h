#pragma once
// TODO(helper): fast executor on oneDNN.
