//! Machine code of the registration constructor and destructor, per host ABI.
//!
//! The code does what clang's `__hip_module_ctor` / `__hip_module_dtor` do (host-objects
//! §1.3), unrolled per kernel and variable:
//!
//! ```text
//! ctor: if (handle == 0) handle = __hipRegisterFatBinary(&wrapper);
//!       for each kernel:   __hipRegisterFunction(handle, &kernel_handle, name, name, -1, 0, 0, 0, 0, 0);
//!       for each variable: __hipRegisterVar(handle, &shadow, name, name, extern, size, constant, 0);
//!       atexit(dtor);
//! dtor: if (handle != 0) { __hipUnregisterFatBinary(handle); handle = 0; }
//! ```
//!
//! Every reference to the object's own data goes through a *section* symbol plus an offset,
//! so it is PC- or TOC-relative and never preemptible: the code links into executables, PIEs
//! and shared libraries alike. Calls go through the PLT (ELF) or a direct `call` (COFF, where
//! the linker adds import thunks).
//!
//! | ABI | argument registers | stack arguments | references |
//! |---|---|---|---|
//! | x86-64 System V | rdi rsi rdx rcx r8 r9 | `[rsp]`… | `R_X86_64_PC32`, calls `R_X86_64_PLT32` |
//! | x86-64 Windows | rcx rdx r8 r9 | `[rsp+32]`… (after the shadow space) | `IMAGE_REL_AMD64_REL32` |
//! | AArch64 AAPCS64 | x0–x7 | `[sp]`… | `ADR_PREL_PG_HI21` + `ADD_ABS_LO12_NC`/`LDST64_ABS_LO12_NC`, `CALL26` |
//! | ppc64le ELFv2 | r3–r10 | `96(r1)`… (parameter save area) | `TOC16_HA` + `TOC16_LO[_DS]`, `REL24` + `nop`, `.TOC.` via `REL16_HA/LO` |
//!
//! The layout is the same for every ABI ([`emit`]): the destructor, fill up to a 16-byte
//! boundary, then the constructor in three parts (entry and fat-binary registration, one call
//! per kernel and variable, `atexit` and exit). Each ABI ([`Abi`]) supplies the instruction
//! sequences of those parts; forward branches are emitted with a zero displacement and
//! filled in once their target is known ([`Asm::bind`]).

use object::elf;
use object::write::{Relocation, SymbolId};
use object::{RelocationEncoding, RelocationFlags, RelocationKind};

use super::host::Place;
use super::target::{HostArch, HostFormat, HostTarget};
use super::{DeviceVariable, EmbedError};

/// Everything the code refers to.
pub(crate) struct Refs<'a> {
    pub handle: Place,
    pub wrapper: Place,
    /// The section symbol of the section the code goes into.
    pub text: SymbolId,
    pub register_fatbin: SymbolId,
    pub register_function: SymbolId,
    pub register_var: SymbolId,
    pub unregister: SymbolId,
    pub atexit: SymbolId,
    /// `.TOC.` (ppc64le only).
    pub toc: Option<SymbolId>,
    pub kernels: Vec<KernelRef>,
    pub variables: Vec<VariableRef<'a>>,
}

/// A kernel: its host handle and its name string.
pub(crate) type KernelRef = (Place, Place);

/// A variable: its shadow, its name string and its description.
pub(crate) type VariableRef<'a> = (Place, Place, &'a DeviceVariable);

/// The generated code: constructor and destructor in one buffer.
pub(crate) struct Code {
    pub bytes: Vec<u8>,
    pub relocations: Vec<Relocation>,
    pub ctor: (u64, u64),
    pub dtor: (u64, u64),
}

/// Generates the code for `target` (placed at offset 0 of the section of `refs.text`).
pub(crate) fn generate(target: HostTarget, refs: &Refs<'_>) -> Result<Code, EmbedError> {
    let a = match (target.arch, target.format) {
        (HostArch::X86_64, format) => emit(
            &X86_64 {
                win: format == HostFormat::Coff,
            },
            refs,
        )?,
        (HostArch::Aarch64, _) => emit(&Aarch64, refs)?,
        (HostArch::Ppc64le, _) => emit(
            &Ppc64le {
                toc: refs.toc.expect("ppc64le code needs .TOC."),
            },
            refs,
        )?,
    };
    Ok(Code {
        bytes: a.bytes,
        relocations: a.relocs,
        ctor: a.ctor,
        dtor: a.dtor,
    })
}

/// The instruction sequences of one ABI, part by part.
trait Abi {
    /// What fills the gap between the destructor and the 16-byte aligned constructor.
    const FILL: &'static [u8];
    /// The whole destructor.
    fn dtor(&self, a: &mut Asm, r: &Refs<'_>);
    /// The constructor's entry: the frame, the fat binary registered unless the handle is
    /// set, and the handle kept in a callee-saved register.
    fn ctor_entry(&self, a: &mut Asm, r: &Refs<'_>);
    /// The first four arguments of both registration calls: the handle (from the
    /// callee-saved register), the address of the kernel's handle or the variable's shadow,
    /// and the name twice.
    fn head(&self, a: &mut Asm, object: Place, name: Place);
    /// The rest of `__hipRegisterFunction(handle, &kernel, name, name, -1, 0, 0, 0, 0, 0)`.
    fn register_kernel(&self, a: &mut Asm, r: &Refs<'_>);
    /// Whether the code can register `v` (its size fits the encoding).
    fn check(&self, v: &DeviceVariable) -> Result<(), EmbedError> {
        let _ = v;
        Ok(())
    }
    /// The rest of `__hipRegisterVar(handle, &shadow, name, name, extern, size, constant, 0)`.
    fn register_variable(&self, a: &mut Asm, r: &Refs<'_>, v: &DeviceVariable);
    /// The constructor's exit: `atexit(dtor)` and the frame undone.
    fn ctor_exit(&self, a: &mut Asm, r: &Refs<'_>);
}

/// The destructor and constructor of `abi`, laid out in one buffer.
fn emit<A: Abi>(abi: &A, r: &Refs<'_>) -> Result<Asm, EmbedError> {
    let mut a = Asm::default();
    let start = a.pos();
    abi.dtor(&mut a, r);
    a.dtor = (start, a.pos() - start);
    a.align(16, A::FILL);

    let start = a.pos();
    abi.ctor_entry(&mut a, r);
    for &(handle, name) in &r.kernels {
        abi.head(&mut a, handle, name);
        abi.register_kernel(&mut a, r);
    }
    for &(shadow, name, v) in &r.variables {
        abi.check(v)?;
        abi.head(&mut a, shadow, name);
        abi.register_variable(&mut a, r, v);
    }
    abi.ctor_exit(&mut a, r);
    a.ctor = (start, a.pos() - start);
    Ok(a)
}

/// The code buffer with its relocations and the extents of the two functions.
#[derive(Default)]
struct Asm {
    bytes: Vec<u8>,
    relocs: Vec<Relocation>,
    ctor: (u64, u64),
    dtor: (u64, u64),
}

/// A forward branch waiting for its target: where it is and its instruction without the
/// displacement.
struct Branch {
    at: u64,
    insn: u32,
}

impl Asm {
    fn pos(&self) -> u64 {
        self.bytes.len() as u64
    }

    fn b(&mut self, bytes: &[u8]) {
        self.bytes.extend_from_slice(bytes);
    }

    fn u32(&mut self, insn: u32) {
        self.bytes.extend_from_slice(&insn.to_le_bytes());
    }

    fn reloc(&mut self, offset: u64, (symbol, off): Place, bias: i64, flags: RelocationFlags) {
        self.relocs.push(Relocation {
            offset,
            symbol,
            addend: off as i64 + bias,
            flags,
        });
    }

    /// A 32-bit instruction with an ELF relocation of `r_type` against `place + bias` at its
    /// start.
    fn u32_rel(&mut self, insn: u32, place: Place, bias: i64, r_type: u32) {
        self.reloc(self.pos(), place, bias, RelocationFlags::Elf { r_type });
        self.u32(insn);
    }

    fn align(&mut self, to: usize, fill: &[u8]) {
        while self.bytes.len() % to != 0 {
            let n = (to - self.bytes.len() % to).min(fill.len());
            self.bytes.extend_from_slice(&fill[..n]);
        }
    }

    /// A 32-bit forward branch whose displacement [`Asm::bind`] fills in.
    fn branch(&mut self, insn: u32) -> Branch {
        let at = self.pos();
        self.u32(insn);
        Branch { at, insn }
    }

    /// Points `branch` here: rewrites it with `field(distance)` OR-ed into its instruction.
    fn bind(&mut self, branch: Branch, field: impl Fn(u64) -> u32) {
        let insn = branch.insn | field(self.pos() - branch.at);
        let at = branch.at as usize;
        self.bytes[at..at + 4].copy_from_slice(&insn.to_le_bytes());
    }
}

// ---------------------------------------------------------------------------------------------
// x86-64 (System V for ELF, Windows x64 for COFF)

/// x86-64: System V on ELF, Windows x64 (`win`) on COFF.
struct X86_64 {
    win: bool,
}

impl X86_64 {
    /// A 32-bit PC-relative field: COFF's generic relative relocation, or this ELF type.
    fn pc32(&self, a: &mut Asm, place: Place, bias: i64, elf_type: u32) {
        let flags = if self.win {
            RelocationFlags::Generic {
                kind: RelocationKind::Relative,
                encoding: RelocationEncoding::Generic,
                size: 32,
            }
        } else {
            RelocationFlags::Elf { r_type: elf_type }
        };
        a.reloc(a.pos(), place, bias, flags);
        a.b(&[0; 4]);
    }

    /// A RIP-relative reference to data.
    fn rel(&self, a: &mut Asm, place: Place, bias: i64) {
        self.pc32(a, place, bias, elf::R_X86_64_PC32);
    }

    /// `call sym`, or `jmp sym` (a tail call).
    fn call(&self, a: &mut Asm, sym: SymbolId, jump: bool) {
        a.b(&[if jump { 0xe9 } else { 0xe8 }]);
        self.pc32(a, (sym, 0), -4, elf::R_X86_64_PLT32);
    }

    /// The constructor's stack frame below the saved rbx.
    fn frame(&self) -> u8 {
        if self.win { 80 } else { 32 }
    }

    /// The first stack argument slot: SysV from `[rsp]`, Windows after the 32-byte shadow space.
    fn slot0(&self) -> u8 {
        if self.win { 32 } else { 0 }
    }

    /// `lea rcx|rdi, [rip+place]`: the first argument, a data address.
    fn first_address(&self, a: &mut Asm, place: Place) {
        if self.win {
            a.b(&[0x48, 0x8d, 0x0d]); // lea rcx, [rip+place]
        } else {
            a.b(&[0x48, 0x8d, 0x3d]); // lea rdi, [rip+place]
        }
        self.rel(a, place, -4);
    }
}

/// `mov qword [rsp+disp8], imm32` (sign-extended).
fn x86_store(a: &mut Asm, disp: u8, imm: i32) {
    if disp == 0 {
        a.b(&[0x48, 0xc7, 0x04, 0x24]);
    } else {
        a.b(&[0x48, 0xc7, 0x44, 0x24, disp]);
    }
    a.b(&imm.to_le_bytes());
}

impl Abi for X86_64 {
    const FILL: &'static [u8] = &[0xcc];

    fn dtor(&self, a: &mut Asm, r: &Refs<'_>) {
        if self.win {
            a.b(&[0x48, 0x8b, 0x0d]); // mov rcx, [rip+handle]
            self.rel(a, r.handle, -4);
            a.b(&[0x48, 0x85, 0xc9]); // test rcx, rcx
            a.b(&[0x74, 4 + 5 + 11 + 4]); // je .ret
            a.b(&[0x48, 0x83, 0xec, 0x28]); // sub rsp, 40
        } else {
            a.b(&[0x48, 0x8b, 0x3d]); // mov rdi, [rip+handle]
            self.rel(a, r.handle, -4);
            a.b(&[0x48, 0x85, 0xff]); // test rdi, rdi
            a.b(&[0x74, 1 + 5 + 11 + 1]); // je .ret
            a.b(&[0x50]); // push rax (align the stack)
        }
        self.call(a, r.unregister, false);
        a.b(&[0x48, 0xc7, 0x05]); // mov qword [rip+handle], 0
        self.rel(a, r.handle, -8);
        a.b(&[0, 0, 0, 0]);
        if self.win {
            a.b(&[0x48, 0x83, 0xc4, 0x28]); // add rsp, 40
        } else {
            a.b(&[0x58]); // pop rax
        }
        a.b(&[0xc3]); // ret
    }

    fn ctor_entry(&self, a: &mut Asm, r: &Refs<'_>) {
        a.b(&[0x53]); // push rbx
        a.b(&[0x48, 0x83, 0xec, self.frame()]); // sub rsp, frame
        a.b(&[0x48, 0x8b, 0x05]); // mov rax, [rip+handle]
        self.rel(a, r.handle, -4);
        a.b(&[0x48, 0x85, 0xc0]); // test rax, rax
        a.b(&[0x75, 7 + 5 + 7]); // jne 1f
        self.first_address(a, r.wrapper);
        self.call(a, r.register_fatbin, false);
        a.b(&[0x48, 0x89, 0x05]); // mov [rip+handle], rax
        self.rel(a, r.handle, -4);
        a.b(&[0x48, 0x89, 0xc3]); // 1: mov rbx, rax
    }

    fn head(&self, a: &mut Asm, object: Place, name: Place) {
        if self.win {
            a.b(&[0x48, 0x89, 0xd9]); // mov rcx, rbx
            a.b(&[0x48, 0x8d, 0x15]); // lea rdx, [rip+object]
            self.rel(a, object, -4);
            a.b(&[0x4c, 0x8d, 0x05]); // lea r8, [rip+name]
            self.rel(a, name, -4);
            a.b(&[0x4d, 0x89, 0xc1]); // mov r9, r8
        } else {
            a.b(&[0x48, 0x89, 0xdf]); // mov rdi, rbx
            a.b(&[0x48, 0x8d, 0x35]); // lea rsi, [rip+object]
            self.rel(a, object, -4);
            a.b(&[0x48, 0x8d, 0x15]); // lea rdx, [rip+name]
            self.rel(a, name, -4);
            a.b(&[0x48, 0x89, 0xd1]); // mov rcx, rdx
        }
    }

    fn register_kernel(&self, a: &mut Asm, r: &Refs<'_>) {
        let slot0 = self.slot0();
        if self.win {
            x86_store(a, slot0, -1); // threadLimit
            for i in 1..6 {
                x86_store(a, slot0 + 8 * i, 0);
            }
        } else {
            a.b(&[0x41, 0xb8, 0xff, 0xff, 0xff, 0xff]); // mov r8d, -1
            a.b(&[0x45, 0x31, 0xc9]); // xor r9d, r9d
            for i in 0..4 {
                x86_store(a, slot0 + 8 * i, 0);
            }
        }
        self.call(a, r.register_function, false);
    }

    fn register_variable(&self, a: &mut Asm, r: &Refs<'_>, v: &DeviceVariable) {
        let slot0 = self.slot0();
        if self.win {
            x86_store(a, slot0, i32::from(v.external));
            a.b(&[0x48, 0xb8]); // movabs rax, size
            a.b(&v.size.to_le_bytes());
            a.b(&[0x48, 0x89, 0x44, 0x24, slot0 + 8]); // mov [rsp+slot0+8], rax
            x86_store(a, slot0 + 16, i32::from(v.constant));
            x86_store(a, slot0 + 24, 0);
        } else {
            a.b(&[0x41, 0xb8]); // mov r8d, external
            a.b(&u32::from(v.external).to_le_bytes());
            a.b(&[0x49, 0xb9]); // movabs r9, size
            a.b(&v.size.to_le_bytes());
            x86_store(a, slot0, i32::from(v.constant));
            x86_store(a, slot0 + 8, 0);
        }
        self.call(a, r.register_var, false);
    }

    fn ctor_exit(&self, a: &mut Asm, r: &Refs<'_>) {
        self.first_address(a, (r.text, a.dtor.0));
        a.b(&[0x48, 0x83, 0xc4, self.frame()]); // add rsp, frame
        a.b(&[0x5b]); // pop rbx
        self.call(a, r.atexit, true); // jmp atexit (tail call)
    }
}

// ---------------------------------------------------------------------------------------------
// AArch64 (AAPCS64, ELF)

/// AArch64, AAPCS64.
struct Aarch64;

impl Aarch64 {
    /// `adrp xd, place ; add xd, xd, :lo12:place`
    fn addr(&self, a: &mut Asm, rd: u32, place: Place) {
        a.u32_rel(0x9000_0000 | rd, place, 0, elf::R_AARCH64_ADR_PREL_PG_HI21);
        let add = 0x9100_0000 | (rd << 5) | rd;
        a.u32_rel(add, place, 0, elf::R_AARCH64_ADD_ABS_LO12_NC);
    }

    /// `adrp x8, place ; (ldr|str) xt, [x8, :lo12:place]`
    fn mem(&self, a: &mut Asm, store: bool, rt: u32, place: Place) {
        a.u32_rel(0x9000_0008, place, 0, elf::R_AARCH64_ADR_PREL_PG_HI21);
        let op = if store { 0xf900_0000 } else { 0xf940_0000 };
        a.u32_rel(
            op | (8 << 5) | rt,
            place,
            0,
            elf::R_AARCH64_LDST64_ABS_LO12_NC,
        );
    }

    /// `bl sym`, or `b sym` (a tail call).
    fn call(&self, a: &mut Asm, sym: SymbolId, jump: bool) {
        if jump {
            a.u32_rel(0x1400_0000, (sym, 0), 0, elf::R_AARCH64_JUMP26);
        } else {
            a.u32_rel(0x9400_0000, (sym, 0), 0, elf::R_AARCH64_CALL26);
        }
    }

    /// `mov xd, #value` via movz/movk.
    fn imm(&self, a: &mut Asm, rd: u32, value: u64) {
        a.u32(0xd280_0000 | (((value & 0xffff) as u32) << 5) | rd); // movz xd, #lo
        for hw in 1..4u32 {
            let part = ((value >> (16 * hw)) & 0xffff) as u32;
            if part != 0 {
                a.u32(0xf280_0000 | (hw << 21) | (part << 5) | rd); // movk xd, #part, lsl #16*hw
            }
        }
    }

    /// The 19-bit word displacement of `cbz`/`cbnz`.
    fn imm19(distance: u64) -> u32 {
        (((distance / 4) as u32) & 0x7ffff) << 5
    }
}

impl Abi for Aarch64 {
    const FILL: &'static [u8] = &[0; 4];

    fn dtor(&self, a: &mut Asm, r: &Refs<'_>) {
        self.mem(a, false, 0, r.handle); // ldr x0, handle
        let cbz = a.branch(0xb400_0000); // cbz x0, .ret
        a.u32(0xa9bf_7bfd); // stp x29, x30, [sp, #-16]!
        self.call(a, r.unregister, false);
        self.mem(a, true, 31, r.handle); // str xzr, handle
        a.u32(0xa8c1_7bfd); // ldp x29, x30, [sp], #16
        a.bind(cbz, Self::imm19);
        a.u32(0xd65f_03c0); // .ret: ret
    }

    fn ctor_entry(&self, a: &mut Asm, r: &Refs<'_>) {
        a.u32(0xd101_03ff); // sub sp, sp, #64
        a.u32(0xa903_7bfd); // stp x29, x30, [sp, #48]
        a.u32(0xf900_13f3); // str x19, [sp, #32]
        self.mem(a, false, 0, r.handle); // ldr x0, handle
        let cbnz = a.branch(0xb500_0000); // cbnz x0, 1f
        self.addr(a, 0, r.wrapper);
        self.call(a, r.register_fatbin, false);
        self.mem(a, true, 0, r.handle); // str x0, handle
        a.bind(cbnz, Self::imm19);
        a.u32(0xaa00_03f3); // 1: mov x19, x0
    }

    fn head(&self, a: &mut Asm, object: Place, name: Place) {
        a.u32(0xaa13_03e0); // mov x0, x19
        self.addr(a, 1, object);
        self.addr(a, 2, name);
        a.u32(0xaa02_03e3); // mov x3, x2
    }

    fn register_kernel(&self, a: &mut Asm, r: &Refs<'_>) {
        a.u32(0x1280_0004); // mov w4, #-1
        a.u32(0xaa1f_03e5); // mov x5, xzr
        a.u32(0xaa1f_03e6); // mov x6, xzr
        a.u32(0xaa1f_03e7); // mov x7, xzr
        a.u32(0xa900_7fff); // stp xzr, xzr, [sp]   (gridDim, wSize)
        self.call(a, r.register_function, false);
    }

    fn register_variable(&self, a: &mut Asm, r: &Refs<'_>, v: &DeviceVariable) {
        a.u32(0x5280_0004 | (u32::from(v.external) << 5)); // mov w4, #external
        self.imm(a, 5, v.size);
        a.u32(0x5280_0006 | (u32::from(v.constant) << 5)); // mov w6, #constant
        a.u32(0x5280_0007); // mov w7, #0
        self.call(a, r.register_var, false);
    }

    fn ctor_exit(&self, a: &mut Asm, r: &Refs<'_>) {
        self.addr(a, 0, (r.text, a.dtor.0));
        a.u32(0xf940_13f3); // ldr x19, [sp, #32]
        a.u32(0xa943_7bfd); // ldp x29, x30, [sp, #48]
        a.u32(0x9101_03ff); // add sp, sp, #64
        self.call(a, r.atexit, true); // b atexit (tail call)
    }
}

// ---------------------------------------------------------------------------------------------
// ppc64le (ELFv2)

/// Offset of the local entry point from the global one (the TOC setup).
pub(crate) const PPC64_LOCAL_ENTRY: u64 = 8;

/// ppc64le, ELFv2. The constructor's frame is 128 bytes (32 header + 80 parameter save area,
/// r31 saved below it); the destructor's 32.
struct Ppc64le {
    toc: SymbolId,
}

impl Ppc64le {
    /// `addis r2, r12, (.TOC.-func)@ha ; addi r2, r2, (.TOC.-func)@l`
    fn global_entry(&self, a: &mut Asm) {
        a.u32_rel(0x3c4c_0000, (self.toc, 0), 0, elf::R_PPC64_REL16_HA);
        a.u32_rel(0x3842_0000, (self.toc, 0), 4, elf::R_PPC64_REL16_LO);
    }

    /// `addis rd, r2, place@toc@ha ; addi rd, rd, place@toc@l`
    fn addr(&self, a: &mut Asm, rd: u32, place: Place) {
        a.u32_rel(0x3c02_0000 | (rd << 21), place, 0, elf::R_PPC64_TOC16_HA);
        let addi = 0x3800_0000 | (rd << 21) | (rd << 16);
        a.u32_rel(addi, place, 0, elf::R_PPC64_TOC16_LO);
    }

    /// `addis rb, r2, place@toc@ha ; (ld|std) rt, place@toc@l(rb)`
    fn mem(&self, a: &mut Asm, store: bool, rt: u32, rb: u32, place: Place) {
        a.u32_rel(0x3c02_0000 | (rb << 21), place, 0, elf::R_PPC64_TOC16_HA);
        let op = if store { 0xf800_0000 } else { 0xe800_0000 };
        a.u32_rel(
            op | (rt << 21) | (rb << 16),
            place,
            0,
            elf::R_PPC64_TOC16_LO_DS,
        );
    }

    /// `bl sym ; nop` (the linker may turn the nop into a TOC restore).
    fn call(&self, a: &mut Asm, sym: SymbolId) {
        a.u32_rel(0x4800_0001, (sym, 0), 0, elf::R_PPC64_REL24);
        a.u32(0x6000_0000);
    }

    /// `li rd, v`
    fn li(&self, a: &mut Asm, rd: u32, v: i16) {
        a.u32(0x3800_0000 | (rd << 21) | u32::from(v as u16));
    }

    /// `mr ra, rs`
    fn mr(&self, a: &mut Asm, ra: u32, rs: u32) {
        a.u32(0x7c00_0378 | (rs << 21) | (ra << 16) | (rs << 11));
    }

    /// The 14-bit byte displacement of a conditional branch.
    fn bd(distance: u64) -> u32 {
        (distance as u32) & 0xfffc
    }

    /// The function's entry: the TOC set up, the link register saved and the frame pushed
    /// (the constructor's also saves `r31`).
    fn enter(&self, a: &mut Asm, ctor: bool) {
        self.global_entry(a);
        a.u32(0x7c08_02a6); // mflr r0
        a.u32(0xf801_0010); // std r0, 16(r1)
        if ctor {
            a.u32(0xfbe1_fff8); // std r31, -8(r1)
            a.u32(0xf821_ff81); // stdu r1, -128(r1)
        } else {
            a.u32(0xf821_ffe1); // stdu r1, -32(r1)
        }
    }
}

impl Abi for Ppc64le {
    const FILL: &'static [u8] = &0x6000_0000u32.to_le_bytes();

    fn dtor(&self, a: &mut Asm, r: &Refs<'_>) {
        self.enter(a, false);
        self.mem(a, false, 3, 3, r.handle); // ld r3, handle
        a.u32(0x2c23_0000); // cmpdi r3, 0
        let beq = a.branch(0x4182_0000); // beq .out
        self.call(a, r.unregister);
        self.li(a, 3, 0);
        self.mem(a, true, 3, 4, r.handle); // std r3, handle
        a.bind(beq, Self::bd);
        a.u32(0x3821_0020); // .out: addi r1, r1, 32
        a.u32(0xe801_0010); // ld r0, 16(r1)
        a.u32(0x7c08_03a6); // mtlr r0
        a.u32(0x4e80_0020); // blr
    }

    fn ctor_entry(&self, a: &mut Asm, r: &Refs<'_>) {
        self.enter(a, true);
        self.mem(a, false, 3, 3, r.handle); // ld r3, handle
        a.u32(0x2c23_0000); // cmpdi r3, 0
        let bne = a.branch(0x4082_0000); // bne 1f
        self.addr(a, 3, r.wrapper);
        self.call(a, r.register_fatbin);
        self.mem(a, true, 3, 4, r.handle); // std r3, handle
        a.bind(bne, Self::bd);
        self.mr(a, 31, 3); // 1: mr r31, r3
    }

    fn head(&self, a: &mut Asm, object: Place, name: Place) {
        self.mr(a, 3, 31);
        self.addr(a, 4, object);
        self.addr(a, 5, name);
        self.mr(a, 6, 5);
    }

    fn register_kernel(&self, a: &mut Asm, r: &Refs<'_>) {
        self.li(a, 7, -1);
        for rd in 8..=11 {
            self.li(a, rd, 0);
        }
        a.u32(0xf961_0060); // std r11, 96(r1)   (gridDim)
        a.u32(0xf961_0068); // std r11, 104(r1)  (wSize)
        self.call(a, r.register_function);
    }

    fn check(&self, v: &DeviceVariable) -> Result<(), EmbedError> {
        if v.size > 0x7fff_ffff {
            return Err(EmbedError::Limit(format!(
                "device variable '{}' has {} bytes; ppc64le registration supports up to 2 GiB",
                v.name, v.size
            )));
        }
        Ok(())
    }

    fn register_variable(&self, a: &mut Asm, r: &Refs<'_>, v: &DeviceVariable) {
        self.li(a, 7, i16::from(v.external));
        a.u32(0x3d00_0000 | (v.size >> 16) as u32); // lis r8, size@h
        a.u32(0x6108_0000 | (v.size & 0xffff) as u32); // ori r8, r8, size@l
        self.li(a, 9, i16::from(v.constant));
        self.li(a, 10, 0);
        self.call(a, r.register_var);
    }

    fn ctor_exit(&self, a: &mut Asm, r: &Refs<'_>) {
        self.addr(a, 3, (r.text, a.dtor.0));
        self.call(a, r.atexit);
        a.u32(0x3821_0080); // addi r1, r1, 128
        a.u32(0xe801_0010); // ld r0, 16(r1)
        a.u32(0xebe1_fff8); // ld r31, -8(r1)
        a.u32(0x7c08_03a6); // mtlr r0
        a.u32(0x4e80_0020); // blr
    }
}
