#include "data/point_h5.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <hdf5.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "data/data_test_util.h"
#include "data/point_test_util.h"
#include "test_util.h"

namespace zotrain {
namespace {

// Writes one dataset of any HDF5 type and shape into `path` (created if `create`, else opened
// for appending): for files write_point_h5 cannot make.
void write_h5_dataset(const std::string& path, bool create, const char* name, hid_t type,
                      const std::vector<hsize_t>& dims, const void* data) {
  hid_t f = create ? H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)
                   : H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(f, 0) << path;
  hid_t space = H5Screate_simple(int(dims.size()), dims.data(), nullptr);
  hid_t d = H5Dcreate2(f, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(d, 0) << name;
  // data null: declared, never written (the file holds no values for it).
  if (data) {
    ASSERT_GE(H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), 0) << name;
  }
  H5Dclose(d);
  H5Sclose(space);
  H5Fclose(f);
}

using test::input_error;
using testing::HasSubstr;

class PointH5 : public testing::Test {
 protected:
  // A file with `data` float32 [n, p, 3] and nothing else.
  std::string file_with_data(int64_t n, int64_t p) {
    std::vector<float> pts(size_t(n * p * 3), 0.5f);
    write_h5_dataset(path_, true, "data", H5T_NATIVE_FLOAT, {hsize_t(n), hsize_t(p), 3},
                     pts.data());
    return path_;
  }
  std::string error() {
    return input_error([&] { read_point_h5(path_); });
  }

  test::TempDir tmp_;
  std::string path_ = tmp_.file("ply_data_train0.h5");
};

TEST_F(PointH5, RoundTrip) {
  PointCloudSet s = test::make_clouds(5, 7, 4);
  write_point_h5(path_, s);
  PointCloudSet r = read_point_h5(path_);
  EXPECT_EQ(r.name, path_);
  EXPECT_EQ(r.points_per_cloud, 7);
  EXPECT_EQ(r.points, s.points);
  EXPECT_EQ(r.labels, s.labels);
  EXPECT_EQ(r.num_classes, 0);
}

TEST_F(PointH5, ConvertsOtherNumberTypesAndFlatLabels) {
  const std::vector<double> pts = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  const std::vector<int32_t> labels = {39, 0};
  write_h5_dataset(path_, true, "data", H5T_NATIVE_DOUBLE, {2, 2, 3}, pts.data());
  write_h5_dataset(path_, false, "label", H5T_NATIVE_INT32, {2}, labels.data());
  PointCloudSet r = read_point_h5(path_);
  EXPECT_EQ(r.points, std::vector<float>(pts.begin(), pts.end()));
  EXPECT_EQ(r.labels, (std::vector<uint8_t>{39, 0}));
}

TEST_F(PointH5, MissingOrNotHdf5) {
  EXPECT_THAT(error(), HasSubstr(path_ + ": no such file"));
  test::write_bytes(path_, {'n', 'o', 't', ' ', 'h', '5'});
  EXPECT_THAT(error(), HasSubstr(path_ + ": is not an HDF5 file"));
}

TEST_F(PointH5, MissingDatasets) {
  const std::vector<uint8_t> labels = {1, 2};
  write_h5_dataset(path_, true, "label", H5T_NATIVE_UINT8, {2, 1}, labels.data());
  EXPECT_THAT(error(), HasSubstr(path_ + ": has no dataset 'data'"));
  file_with_data(2, 4);
  EXPECT_THAT(error(), HasSubstr(path_ + ": has no dataset 'label'"));
}

TEST_F(PointH5, DataShapeAndType) {
  const std::vector<float> flat(18, 0);
  write_h5_dataset(path_, true, "data", H5T_NATIVE_FLOAT, {2, 9}, flat.data());
  EXPECT_THAT(error(), HasSubstr(path_ + ": dataset 'data' has shape [2, 9]; expected [N, P, 3]"));
  write_h5_dataset(path_, true, "data", H5T_NATIVE_FLOAT, {3, 3, 2}, flat.data());
  EXPECT_THAT(error(), HasSubstr("has shape [3, 3, 2]; expected [N, P, 3]"));
  const std::vector<int32_t> ints(18, 0);
  write_h5_dataset(path_, true, "data", H5T_NATIVE_INT32, {1, 6, 3}, ints.data());
  EXPECT_THAT(error(), HasSubstr(path_ + ": dataset 'data' does not hold floating-point numbers"));
  write_h5_dataset(path_, true, "data", H5T_NATIVE_FLOAT, {0, 6, 3}, flat.data());
  EXPECT_THAT(error(), HasSubstr("expected at least one cloud"));
}

TEST_F(PointH5, LabelShapeTypeAndRange) {
  const std::vector<int32_t> three = {0, 1, 2};
  file_with_data(2, 4);
  write_h5_dataset(path_, false, "label", H5T_NATIVE_INT32, {3, 1}, three.data());
  EXPECT_THAT(error(),
              HasSubstr(path_ + ": dataset 'label' has shape [3, 1]; expected [2, 1] to match"));
  file_with_data(3, 4);
  const std::vector<int32_t> six = {0, 1, 2, 0, 1, 2};  // a [3, 2] dataset needs six values
  write_h5_dataset(path_, false, "label", H5T_NATIVE_INT32, {3, 2}, six.data());
  EXPECT_THAT(error(), HasSubstr("dataset 'label' has shape [3, 2]"));
  const std::vector<float> floats = {0, 1, 2};
  file_with_data(3, 4);
  write_h5_dataset(path_, false, "label", H5T_NATIVE_FLOAT, {3, 1}, floats.data());
  EXPECT_THAT(error(), HasSubstr(path_ + ": dataset 'label' does not hold integers"));
  const std::vector<int32_t> bad = {0, 300, -1};
  file_with_data(3, 4);
  write_h5_dataset(path_, false, "label", H5T_NATIVE_INT32, {3, 1}, bad.data());
  EXPECT_THAT(error(), HasSubstr(path_ + ": dataset 'label' holds 300 at index 1"));
}

// Issue 22, defects 7 and 9: a size the file cannot hold is refused before the allocation; NaN
// or infinite coordinates are refused by cloud, point and coordinate.
TEST_F(PointH5, DeclaredSizesTheFileCannotHoldAndNonFiniteCoordinates) {
  const std::vector<uint8_t> labels = {1};
  write_h5_dataset(path_, true, "data", H5T_NATIVE_FLOAT, {1, hsize_t{1} << 31, 3}, nullptr);
  write_h5_dataset(path_, false, "label", H5T_NATIVE_UINT8, {1, 1}, labels.data());
  EXPECT_THAT(error(), HasSubstr(path_ + ": dataset 'data' declares [1, 2147483648, 3] floats"));
  for (float bad :
       {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    std::vector<float> pts(2 * 4 * 3, 0.5f);
    pts[1 * 12 + 2 * 3 + 1] = bad;
    write_h5_dataset(path_, true, "data", H5T_NATIVE_FLOAT, {2, 4, 3}, pts.data());
    const std::vector<uint8_t> two = {1, 2};
    write_h5_dataset(path_, false, "label", H5T_NATIVE_UINT8, {2, 1}, two.data());
    EXPECT_THAT(error(), HasSubstr("at cloud 1, point 2, coordinate 1; expected finite"));
  }
}

// A file on which libhdf5 1.10 itself crashes (a memcpy to null; found by fuzz/fuzz_point_h5):
// the child process reading it dies, and the read is an InputError naming the file.
TEST_F(PointH5, AFileTheHdf5LibraryCrashesOnIsAnInputError) {
  const std::string file = std::string(ZOTRAIN_SOURCE_DIR) + "/tests/data/files/libhdf5-crash.h5";
  EXPECT_THAT(input_error([&] { read_point_h5(file); }),
              HasSubstr(file + ": the HDF5 library crashed reading it"));
}

}  // namespace
}  // namespace zotrain
