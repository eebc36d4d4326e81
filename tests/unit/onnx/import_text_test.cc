// TfIdfVectorizer (onnx/rules/tfidf.cc): its counts of skipped n-grams in each mode.
#include <doctest/doctest.h>

#include "model.h"
#include "onnx/import.h"

namespace ytape::onnx_test {

namespace {

// The pool: 1-grams 7 and 9, 2-gram (7, 9), into columns 0, 2 and 1, weighing 2, 3 and 4.
Model tfidf(const std::string& mode, int64_t max_skip, std::vector<int64_t> counts = {0, 2}) {
  Model m(9);
  m.input("x", {2, 5}, onnx::TensorProto_DataType_INT32);
  onnx::NodeProto& n = m.node("TfIdfVectorizer", {"x"}, {"y"}, "tfidf");
  set_string(n, "mode", mode);
  set_int(n, "min_gram_length", 1);
  set_int(n, "max_gram_length", 2);
  set_int(n, "max_skip_count", max_skip);
  set_ints(n, "ngram_counts", counts);
  set_ints(n, "ngram_indexes", {0, 2, 1});
  set_ints(n, "pool_int64s", {7, 9, 7, 9});
  auto* w = n.add_attribute();
  w->set_name("weights");
  w->set_type(onnx::AttributeProto_AttributeType_FLOATS);
  for (float v : {2.0f, 3.0f, 4.0f}) w->add_floats(v);
  m.output("y");
  return m;
}

std::vector<float> vectorize(const Model& m) {
  std::vector<Tensor> y =
      run(m.import(), {{"x", onnx_ints({2, 5}, {7, 9, 1, 7, 9,       // 7 9 twice, adjacent
                                                9, 7, 1, 9, 1})}});  // 7 _ 9: one apart
  CHECK(y[0].shape() == Shape{3, 2});
  return values(y[0]);
}

}  // namespace

TEST_CASE("TfIdfVectorizer counts the pool's n-grams, skipping up to max_skip_count") {
  // Columns: count of 7, of (7, 9), of 9; per row.
  CHECK(vectorize(tfidf("TF", 0)) == std::vector<float>{2, 2, 2, 1, 0, 2});
  CHECK(vectorize(tfidf("TF", 1)) == std::vector<float>{2, 2, 2, 1, 1, 2});
  CHECK(vectorize(tfidf("IDF", 1)) == std::vector<float>{2, 4, 3, 2, 4, 3});
  CHECK(vectorize(tfidf("TFIDF", 1)) == std::vector<float>{4, 8, 6, 2, 4, 6});
  CHECK(import_error(tfidf("TF", 0, {0, 3})) ==
        "m.onnx: node 1 'tfidf' (TfIdfVectorizer, opset 9): ngram_counts [0,3] do not divide a "
        "pool of 4");
}

}  // namespace ytape::onnx_test
