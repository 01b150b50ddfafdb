/* The "csv" data source: header, label column, no label, delimiters, and
 * malformed tables. */
#include "data_test.h"

static kiln_status open_csv(kiln_runtime* rt, const char* path, int header, int64_t label, const char* delimiter,
                            kiln_data_source** out) {
  const kiln_attr config[4] = {kiln_attr_string("path", path), kiln_attr_bool("header", header),
                               kiln_attr_int("label_column", label), kiln_attr_string("delimiter", delimiter)};
  return kiln_data_source_create(rt, "csv", config, 4, out);
}

static void test_label_last(kiln_runtime* rt) {
  kiln_data_source* src = NULL;
  const kiln_attr config[1] = {kiln_attr_string("path", temp_path("last.csv"))};
  float row[2];
  kiln_tensor_desc desc;
  const int64_t dims[1] = {2};
  int64_t length = 0;
  write_text(temp_path("last.csv"), "a,b,label\n1.5,-2,3\n 4e2 , 0.25 ,1\r\n\n");
  /* Defaults: a header row, the label in the last column. */
  CHECK_OK(kiln_data_source_create(rt, "csv", config, 1, &src));
  if (!src) return;
  CHECK_OK(kiln_data_source_length(src, &length));
  CHECK(length == 2);
  read_example_field(src, 1, "input", &desc, row, sizeof row);
  CHECK(desc_is(&desc, KILN_F32, 1, dims));
  CHECK(row[0] == 400.0f && row[1] == 0.25f);
  CHECK(example_target(src, 0) == 3);
  CHECK(example_target(src, 1) == 1);
  kiln_data_source_release(src);
}

static void test_label_first_no_header(kiln_runtime* rt) {
  kiln_data_source* src = NULL;
  float row[2];
  kiln_tensor_desc desc;
  write_text(temp_path("first.csv"), "7;1;2\n8;3;4");
  CHECK_OK(open_csv(rt, temp_path("first.csv"), 0, 0, ";", &src));
  if (!src) return;
  read_example_field(src, 1, "input", &desc, row, sizeof row);
  CHECK(row[0] == 3.0f && row[1] == 4.0f);
  CHECK(example_target(src, 0) == 7);
  CHECK(example_target(src, 1) == 8);
  kiln_data_source_release(src);
}

static void test_no_label(kiln_runtime* rt) {
  kiln_data_source* src = NULL;
  kiln_example* ex = NULL;
  kiln_tensor* t = NULL;
  float row[3];
  kiln_tensor_desc desc;
  size_t count = 0;
  write_text(temp_path("nolabel.csv"), "x,y,z\n1,2,3\n");
  CHECK_OK(open_csv(rt, temp_path("nolabel.csv"), 1, -1, ",", &src));
  if (!src) return;
  CHECK_OK(kiln_data_source_get(src, 0, &ex));
  if (ex) {
    read_field(ex, "input", &desc, row, sizeof row);
    CHECK(row[0] == 1.0f && row[1] == 2.0f && row[2] == 3.0f);
    CHECK_OK(kiln_example_field_count(ex, &count));
    CHECK(count == 1);
    CHECK_ERROR(kiln_example_get(ex, "target", &t), KILN_ERR_NOT_FOUND, "no field 'target'");
  }
  kiln_example_release(ex);
  kiln_data_source_release(src);
}

static void test_bad_tables(kiln_runtime* rt) {
  kiln_data_source* src = NULL;
  write_text(temp_path("word.csv"), "a,b\n1,2\n3,abc\n");
  CHECK_ERROR(open_csv(rt, temp_path("word.csv"), 1, -2, ",", &src), KILN_ERR_IO, "word.csv", "line 3, column 2",
              "'abc' is not a number");
  write_text(temp_path("ragged.csv"), "1,2,3\n4,5\n");
  CHECK_ERROR(open_csv(rt, temp_path("ragged.csv"), 0, -2, ",", &src), KILN_ERR_IO, "ragged.csv",
              "line 2 has 2 columns", "line 1 has 3");
  /* A row wider than the header, after a blank line: lines are counted as in the file. */
  write_text(temp_path("wide-row.csv"), "x,y,label\n1,2,0\n\n3,4,5,1\n");
  CHECK_ERROR(open_csv(rt, temp_path("wide-row.csv"), 1, -2, ",", &src), KILN_ERR_IO, "wide-row.csv",
              "line 4 has 4 columns", "line 1 has 3");
  write_text(temp_path("fraction.csv"), "1,2.5\n");
  CHECK_ERROR(open_csv(rt, temp_path("fraction.csv"), 0, -2, ",", &src), KILN_ERR_IO, "label 2.5",
              "not an integer");
  write_text(temp_path("narrow.csv"), "1,2\n");
  CHECK_ERROR(open_csv(rt, temp_path("narrow.csv"), 0, 5, ",", &src), KILN_ERR_INVALID_ARGUMENT,
              "'label_column' is 5", "has 2 columns");
  CHECK_ERROR(open_csv(rt, temp_path("narrow.csv"), 0, -2, "::", &src), KILN_ERR_INVALID_ARGUMENT,
              "exactly one character");
  write_text(temp_path("empty.csv"), "\n\n");
  CHECK_ERROR(open_csv(rt, temp_path("empty.csv"), 0, -2, ",", &src), KILN_ERR_IO, "has no rows");
  CHECK_ERROR(open_csv(rt, temp_path("missing.csv"), 0, -2, ",", &src), KILN_ERR_IO, "cannot open", "missing.csv");
  CHECK(src == NULL);
}

int main(void) {
  kiln_runtime* rt = open_runtime();
  test_label_last(rt);
  test_label_first_no_header(rt);
  test_no_label(rt);
  test_bad_tables(rt);
  kiln_runtime_release(rt);
  return check_report("plugins/data/csv");
}
