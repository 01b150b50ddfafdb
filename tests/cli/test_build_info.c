/* kiln_build_info_get and kiln_devices_get: every field filled, older
 * (smaller) structs written only within their size, and bad arguments
 * refused with a message. */
#include <string.h>

#include "check.h"
#include "kiln/kiln.h"

static int is_text(const char* s) { return s != NULL && s[0] != '\0'; }

static void test_build_info(void) {
  kiln_build_info info;
  memset(&info, 0, sizeof info);
  info.size = sizeof info;
  CHECK_OK(kiln_build_info_get(&info));
  CHECK(info.version != NULL && strcmp(info.version, kiln_version()) == 0);
  CHECK(info.with_cuda == 0 || info.with_cuda == 1);
  CHECK(info.with_nccl == 0 || info.with_nccl == 1);
  CHECK(is_text(info.compiler));
  CHECK(is_text(info.build_type));
  /* "MAJOR.MINOR.PATCH" of the oneDNN library loaded. */
  CHECK(is_text(info.onednn_version) && info.onednn_version[0] >= '0' && info.onednn_version[0] <= '9' &&
        strchr(info.onednn_version, '.') != NULL);
  CHECK(is_text(info.cuda_runtime_version));
  if (!info.with_cuda) CHECK(strcmp(info.cuda_runtime_version, "not built") == 0);
  /* "MAJOR.MINOR.PATCH" of cuBLASLt and cuDNN in a CUDA build, which links them. */
  CHECK(is_text(info.cublas_version) && (info.with_cuda ? strchr(info.cublas_version, '.') != NULL
                                                        : strcmp(info.cublas_version, "not built") == 0));
  CHECK(is_text(info.cudnn_version) && (info.with_cuda ? info.cudnn_version[0] == '9'
                                                       : strcmp(info.cudnn_version, "not built") == 0));
  CHECK(is_text(info.nccl_version));
}

/* A caller built against a header that ended at `version`. */
static void test_older_struct(void) {
  kiln_build_info info;
  memset(&info, 0, sizeof info);
  info.size = offsetof(kiln_build_info, with_cuda);
  CHECK_OK(kiln_build_info_get(&info));
  CHECK(info.version != NULL);
  CHECK(info.compiler == NULL && info.onednn_version == NULL && info.nccl_version == NULL);
}

static void test_bad_arguments(void) {
  kiln_build_info info;
  memset(&info, 0, sizeof info);
  CHECK_ERROR(kiln_build_info_get(NULL), KILN_ERR_INVALID_ARGUMENT, "kiln_build_info_get",
              "argument 'out' is NULL");
  CHECK_ERROR(kiln_build_info_get(&info), KILN_ERR_INVALID_ARGUMENT, "kiln_build_info.size is 0",
              "set it to sizeof(kiln_build_info)");
  CHECK_ERROR(kiln_devices_get(NULL, NULL, NULL), KILN_ERR_INVALID_ARGUMENT, "kiln_devices_get",
              "argument 'rt' is NULL");
}

static void test_devices(void) {
  kiln_runtime* rt = NULL;
  kiln_build_info info;
  int cuda_count = -1;
  const char* reason = NULL;
  memset(&info, 0, sizeof info);
  info.size = sizeof info;
  CHECK_OK(kiln_build_info_get(&info));
  CHECK_OK(kiln_runtime_create(NULL, &rt));
  if (!rt) return;
  CHECK_OK(kiln_devices_get(rt, &cuda_count, &reason));
  CHECK(cuda_count >= 0);
  CHECK(reason != NULL);
  /* No GPU comes with a reason, and a GPU with none. */
  if (reason) CHECK((cuda_count == 0) == (reason[0] != '\0'));
  if (!info.with_cuda) {
    CHECK(cuda_count == 0);
    CHECK(reason != NULL && strstr(reason, "without CUDA") != NULL);
  }
  /* Either output may be left out. */
  CHECK_OK(kiln_devices_get(rt, NULL, &reason));
  CHECK_OK(kiln_devices_get(rt, &cuda_count, NULL));
  kiln_runtime_release(rt);
}

int main(void) {
  test_build_info();
  test_older_struct();
  test_bad_arguments();
  test_devices();
  return check_report("cli/build_info");
}
