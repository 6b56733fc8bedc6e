// Scenarios 1–4: capabilities, the device list, enum values.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import * as uform from 'uform';
import { Executor, GpuVendor, Mood, MultimemTier } from 'uform';
import { isGpuClass, throwsUForm } from './helpers.mjs';

test('01 capabilitiesCompiled and capabilitiesAvailable are non-empty comma-separated names without spaces', () => {
    for (const list of [uform.capabilitiesCompiled(), uform.capabilitiesAvailable()]) {
        assert.equal(typeof list, 'string');
        assert.ok(list.length > 0);
        assert.doesNotMatch(list, /\s/);
        for (const name of list.split(',')) assert.match(name, /^[a-z0-9]+(-[a-z0-9]+)*$/, `name ${JSON.stringify(name)} in ${list}`);
    }
    // Whatever this machine offers, this binary was compiled for.
    const compiled = new Set(uform.capabilitiesCompiled().split(','));
    for (const name of uform.capabilitiesAvailable().split(',')) assert.ok(compiled.has(name), `${name} available but not compiled`);
    // Repeated calls agree.
    assert.equal(uform.capabilitiesCompiled(), uform.capabilitiesCompiled());
});

test('02 every CPU class capabilitiesAvailable names is accepted as cpuClass', () => {
    const cpuClasses = uform.capabilitiesAvailable().split(',').filter((name) => !isGpuClass(name));
    assert.ok(cpuClasses.length > 0);
    for (const cpuClass of cpuClasses) {
        const executor = Executor.forRam({ cpuClass, threads: 1 });
        executor.drain();
        executor.free();
    }
});

test('02 an unknown cpuClass is an invalid-argument error that lists the accepted names', () => {
    const error = throwsUForm(() => Executor.forRam({ cpuClass: 'intel-pentium-pro' }), 'invalid_argument', '`config.cpuClass`', 'intel-pentium-pro');
    for (const name of uform.capabilitiesAvailable().split(',').filter((n) => !isGpuClass(n))) {
        assert.match(error.message, new RegExp(name), `the message lists ${name}`);
    }
});

// Whether this machine could have GPUs a driver reaches: a GPU device node. UFORM_EXPECT_GPUS=1 or 0 overrides.
const gpuNodes = ['/dev/nvidiactl', '/dev/kfd'].some((node) => existsSync(node));

test('03 gpuDevices lists the GPUs, and an empty list without a GPU driver, never an error', () => {
    const devices = uform.gpuDevices();
    assert.ok(Array.isArray(devices));
    const expect = process.env.UFORM_EXPECT_GPUS;
    if (expect === '1') assert.ok(devices.length > 0, 'UFORM_EXPECT_GPUS=1 but gpuDevices() is empty');
    if (expect === '0' || (expect === undefined && !gpuNodes)) assert.deepEqual(devices, []);
    for (const device of devices) {
        assert.equal(typeof device.vendorOrdinal, 'number');
        assert.equal(typeof device.name, 'string');
        assert.ok(device.memoryBytes > 0, `${device.name}: memoryBytes ${device.memoryBytes}`);
        assert.ok(device.gpuClass === null || typeof device.gpuClass === 'string');
        assert.ok([GpuVendor.Nvidia, GpuVendor.Amd, GpuVendor.Apple, GpuVendor.Unknown].includes(device.vendor));
    }
});

test('04 MultimemTier has the string values of the seed page', () => {
    assert.equal(MultimemTier.SwitchReduced, 'switch-reduced');
    assert.equal(MultimemTier.PeerRead, 'peer-read');
    assert.deepEqual(Object.keys(MultimemTier), ['SwitchReduced', 'PeerRead']);
    assert.ok(Object.isFrozen(MultimemTier));
});

test('04 GpuVendor is numbered 0 to 3 with reverse mapping, as tsc emits enums', () => {
    assert.deepEqual([GpuVendor.Unknown, GpuVendor.Nvidia, GpuVendor.Amd, GpuVendor.Apple], [0, 1, 2, 3]);
    assert.equal(GpuVendor[1], 'Nvidia');
    assert.equal(GpuVendor[GpuVendor.Apple], 'Apple');
    assert.ok(Object.isFrozen(GpuVendor));
});

test('04 Mood has Parked and Spinning', () => {
    assert.equal(Mood.Parked, 0);
    assert.equal(Mood.Spinning, 1);
    assert.equal(Mood[Mood.Spinning], 'Spinning');
    assert.ok(Object.isFrozen(Mood));
});
