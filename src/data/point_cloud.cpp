#include "zotrain/data/point_cloud.h"

#include "gather.h"

namespace zotrain {

PointCloudSet PointCloudSet::subset(const std::vector<int64_t>& indices) const {
  PointCloudSet out;
  out.name = name;
  out.points_per_cloud = points_per_cloud;
  out.num_classes = num_classes;
  out.points = detail::gather(points, cloud_numel(), indices);
  out.labels = detail::gather(labels, 1, indices);
  return out;
}

}  // namespace zotrain
