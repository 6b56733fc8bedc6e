/* A consumer of the installed package: capabilities, the device list, and one executor's life cycle. */
#include <stdio.h>
#include <string.h>
#include <uform.h>

int main(void) {
    const uform_gpu_device_t *devices = NULL;
    size_t count = 0;
    uform_executor_t *executor = NULL;
    if (strlen(uform_capabilities_available()) == 0) return 1;
    if (uform_gpu_devices(&devices, &count) != UFORM_STATUS_OK) return 2;
    if (uform_executor_for_ram(NULL, &executor) != UFORM_STATUS_OK) return 3;
    if (uform_executor_drain(executor, UFORM_MOOD_PARKED) != UFORM_STATUS_OK) return 4;
    if (uform_executor_free(executor) != UFORM_STATUS_OK) return 5;
    printf("consumer: %s, %zu GPUs\n", uform_capabilities_available(), count);
    return 0;
}
