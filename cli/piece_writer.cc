#include "cli/piece_writer.h"

#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <utility>

namespace ytape::cli {

PieceWriter::PieceWriter(int fd) : fd_(fd), thread_([this] { run(); }) {}

PieceWriter::~PieceWriter() {
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void PieceWriter::put(std::string_view piece) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return waiting_.size() < kDepth || failed_; });
  if (failed_) return;
  std::string copy;
  if (!spare_.empty()) {
    copy = std::move(spare_.back());
    spare_.pop_back();
  }
  copy.assign(piece);
  waiting_.push_back(std::move(copy));
  lock.unlock();
  changed_.notify_all();
}

bool PieceWriter::finish() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return waiting_.empty() || failed_; });
  errno = error_;
  return !failed_;
}

void PieceWriter::run() {
  // Signals (an interrupt that removes the temporary file) go to the threads that make
  // the file, as they did before this one.
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  std::unique_lock lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] { return !waiting_.empty() || closing_; });
    if (waiting_.empty()) return;
    std::string piece = std::move(waiting_.front());
    lock.unlock();
    bool ok = true;
    for (size_t done = 0; ok && done < piece.size();) {
      ssize_t n = ::write(fd_, piece.data() + done, piece.size() - done);
      if (n < 0 && errno == EINTR) continue;
      ok = n >= 0;
      if (ok) done += static_cast<size_t>(n);
    }
    int error = errno;
    lock.lock();
    waiting_.pop_front();  // only now: finish() waits for the write, not the hand-over
    spare_.push_back(std::move(piece));
    if (!ok && !failed_) {
      failed_ = true;
      error_ = error;
      waiting_.clear();
    }
    changed_.notify_all();
  }
}

}  // namespace ytape::cli
